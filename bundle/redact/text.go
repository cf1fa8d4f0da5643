package redact

import (
	"bytes"
	"sort"
)

// span is one secret found in text.
type span struct {
	start, end int
	rule       string
	prio       int
}

// asciiLower lower-cases ASCII letters only, so offsets match the original bytes.
func asciiLower(dst, src []byte) []byte {
	dst = append(dst[:0], src...)
	for i, c := range dst {
		if c >= 'A' && c <= 'Z' {
			dst[i] = c + 'a' - 'A'
		}
	}
	return dst
}

// detect runs the detectors whose keywords h found (and those without keywords) over
// data, and returns what they found, unsorted.
func (p *Policy) detect(data []byte, h keywordHits) []span {
	var spans []span
	h.byDetector(p.matcher)
	dets, poss := h.dets, h.pos
	for _, d := range p.unkeyedDets {
		dets, poss = append(dets, int32(d)), append(poss, nil)
	}
	for i, di := range dets {
		prio := int(di)
		d := p.detectors[prio]
		pos := poss[i]
		if d.find != nil {
			for _, s := range d.find(data) {
				spans = append(spans, span{s[0], s[1], d.rule, prio})
			}
			continue
		}
		if d.keywords == nil {
			spans = p.detectLine(spans, d, prio, data, 0)
			continue
		}
		if d.region != nil {
			winEnd := -1
			for _, ls := range lineStarts(data, pos) {
				if ls < winEnd {
					continue
				}
				winEnd = min(len(data), ls+maxMultiline)
				for _, s := range d.region(data[ls:winEnd]) {
					spans = append(spans, span{ls + s[0], ls + s[1], d.rule, prio})
				}
			}
			continue
		}
		if d.hits != nil {
			spans = p.detectHits(spans, d, prio, data, pos)
			continue
		}
		for _, ls := range lineStarts(data, pos) {
			le := len(data)
			if e := bytes.IndexByte(data[ls:], '\n'); e >= 0 {
				le = ls + e
			}
			spans = p.detectLine(spans, d, prio, data[ls:le], ls)
		}
	}
	return spans
}

// detectHits runs a detector that reads its keywords' positions on each line holding
// them. A line ending with a separator ("token =", "<apiToken>") is read with the
// next one, where its value may stand, and a line with one before it.
func (p *Policy) detectHits(spans []span, d detector, prio int, data []byte, pos []int) []span {
	var ends []int
	for i := 0; i < len(pos); {
		ls := bytes.LastIndexByte(data[:pos[i]], '\n') + 1
		le := len(data)
		if e := bytes.IndexByte(data[pos[i]:], '\n'); e >= 0 {
			le = pos[i] + e
		}
		j := i
		for j < len(pos) && pos[j] < le {
			j++
		}
		if ls > 0 {
			if ps := bytes.LastIndexByte(data[:ls-1], '\n') + 1; endsWithSeparator(data[ps : ls-1]) {
				ls = ps
			}
		}
		if endsWithSeparator(data[ls:le]) && le < len(data) {
			if e := bytes.IndexByte(data[le+1:], '\n'); e >= 0 {
				le += 1 + e
			} else {
				le = len(data)
			}
		}
		ends = ends[:0]
		for _, o := range pos[i:j] {
			ends = append(ends, o-ls)
		}
		for _, s := range d.hits(data[ls:le], ends) {
			spans = append(spans, span{ls + s[0], ls + s[1], d.rule, prio})
		}
		i = j
	}
	return spans
}

// endsWithSeparator reports a line whose value may follow on the next line.
func endsWithSeparator(line []byte) bool {
	t := bytes.TrimRight(line, " \t\r")
	return len(t) > 0 && bytes.IndexByte([]byte("=:>,|"), t[len(t)-1]) >= 0
}

func (p *Policy) detectLine(spans []span, d detector, prio int, line []byte, off int) []span {
	if d.scan != nil {
		for _, s := range d.scan(line) {
			spans = append(spans, span{off + s[0], off + s[1], d.rule, prio})
		}
		return spans
	}
	for _, m := range d.re.FindAllSubmatchIndex(line, -1) {
		if s, e, ok := d.pick(line, m); ok && e > s {
			spans = append(spans, span{off + s, off + e, d.rule, prio})
		}
	}
	return spans
}

// resolve orders spans, drops those touching an existing mask or a skipped region, and
// merges overlaps so every byte is masked at most once.
func resolve(spans []span, masks [][]int, skip [][2]int) []span {
	sort.Slice(spans, func(i, j int) bool {
		a, b := spans[i], spans[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.prio != b.prio {
			return a.prio < b.prio
		}
		return a.end > b.end
	})
	kept := spans[:0]
	for _, s := range spans {
		if overlapsAny(s.start, s.end, masks) || overlapsRegion(s.start, s.end, skip) {
			continue
		}
		if n := len(kept); n > 0 && s.start < kept[n-1].end {
			kept[n-1].end = max(kept[n-1].end, s.end)
			continue
		}
		kept = append(kept, s)
	}
	return kept
}

func overlapsAny(start, end int, spans [][]int) bool {
	i := sort.Search(len(spans), func(i int) bool { return spans[i][1] > start })
	return i < len(spans) && spans[i][0] < end
}

func overlapsRegion(start, end int, regions [][2]int) bool {
	i := sort.Search(len(regions), func(i int) bool { return regions[i][1] > start })
	return i < len(regions) && regions[i][0] < end
}

// textEdits masks the secrets found in free text. Hits are reported at their offset, or
// all at anchor when anchor >= 0 (text inside a JSON string).
func (p *Policy) textEdits(data []byte, anchor int, s sink) []edit {
	if len(data) == 0 {
		return nil
	}
	return p.textEditsWith(data, p.matcher.scan(data), anchor, s, nil)
}

func (p *Policy) textEditsWith(data []byte, h keywordHits, anchor int, s sink, skip [][2]int) []edit {
	if h.none() && !p.unkeyed {
		return nil
	}
	spans := p.detect(data, h)
	if len(spans) == 0 {
		return nil
	}
	kept := resolve(spans, maskSpans(data), skip)
	edits := make([]edit, 0, len(kept))
	for _, k := range kept {
		at := anchor
		if at < 0 {
			at = k.start
		}
		s.hit(k.rule, at)
		edits = append(edits, edit{k.start, k.end, p.mask(k.rule, data[k.start:k.end])})
	}
	return edits
}

// maxRounds bounds redact-until-stable; see redactFile.
const maxRounds = 3

// redactFile redacts one file. Masking a value of something that looked like JSON but
// did not parse can make it parse (the value held the stray control character), and
// then its structure may reveal more; so such a file is redacted again until nothing
// changes, which keeps redaction idempotent. untouched reports that the first round
// found nothing to edit, so the data is returned as it came.
func (p *Policy) redactFile(name string, data []byte, s sink) (out []byte, untouched bool) {
	for round := 1; ; round++ {
		edits, retry := p.fileEdits(name, data, s)
		if round == 1 && len(edits) == 0 {
			return data, true
		}
		data = splice(data, edits)
		if len(edits) == 0 || !retry || round == maxRounds {
			return data, false
		}
	}
}

// fileEdits redacts one file: a JSON document structurally, anything else as text in
// which lines that are JSON objects (structured logs) are handled structurally. Data
// holding no keyword of any rule cannot hold anything to mask and is not parsed. retry
// reports JSON-looking data that did not parse and was redacted as text.
func (p *Policy) fileEdits(name string, data []byte, s sink) (edits []edit, retry bool) {
	h := p.matcher.scan(data)
	itemKind := fileItemKind(name)
	runtimeEnv := runtimeEnvFile(name)
	if h.none() && !p.unkeyed && len(p.paths) == 0 && itemKind != "Secret" && !runtimeEnv {
		return nil, false
	}
	if looksLikeJSON(data) {
		w := &walker{p: p, sink: s, anchor: -1, hits: &h, runtimeEnv: runtimeEnv, memo: stringMemo{}, names: nameJudgements{}}
		root, doc, err := w.parse(data, &h, 0)
		if err == nil {
			w.doc = doc
			w.document(root, itemKind)
			doc.release()
			return w.edits, false
		}
		retry = true
		p.log.WithField("file", name).WithError(err).Debug("not a JSON document, redacting it as text")
	}
	var regions [][2]int
	memo, names := stringMemo{}, nameJudgements{}
	candidates := lineStarts(data, h.any)
	if p.unkeyed || len(p.paths) > 0 {
		candidates = allLineStarts(data)
	}
	for _, ls := range candidates {
		le := len(data)
		if e := bytes.IndexByte(data[ls:], '\n'); e >= 0 {
			le = ls + e
		}
		line := data[ls:le]
		t := bytes.TrimSpace(line)
		if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
			continue
		}
		w := &walker{p: p, sink: s, base: ls, anchor: -1, hits: &h, memo: memo, names: names}
		root, doc, err := w.parse(line, &h, ls)
		if err != nil {
			retry = true
			continue
		}
		w.doc = doc
		w.document(root, "")
		for _, e := range w.edits {
			edits = append(edits, edit{ls + e.start, ls + e.end, e.repl})
		}
		regions = append(regions, [2]int{ls, le})
	}
	return append(edits, p.textEditsWith(data, h, -1, s, regions)...), retry
}

func allLineStarts(data []byte) []int {
	starts := []int{0}
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// looksLikeJSON is a cheap test before a full parse.
func looksLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[' || t[0] == '"')
}
