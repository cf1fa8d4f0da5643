package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"
)

// A bundle podflow made from another tool's output (a must-gather, a pasted ticket)
// carries its provenance in ImportReportPath: every input file with what it was taken
// for, and the origin of every produced file, so that evidence read from the bundle is
// cited in the user's own files and lines.

// ImportReportVersion versions import-report.json; readers accept any 1.x.
const ImportReportVersion = "1.0"

// File statuses in an import report.
const (
	// ImportUsed means the file was turned into bundle evidence.
	ImportUsed = "used"
	// ImportIgnored means the file was recognised but carries nothing podflow reads.
	ImportIgnored = "ignored"
	// ImportUnreadable means the file looked like evidence but could not be parsed.
	ImportUnreadable = "unreadable"
	// ImportFailed means the file records that the other tool failed to collect a source.
	ImportFailed = "source-failed"
)

// ImportReport is import-report.json: every input file with what it was detected as,
// and the origin of every produced file so findings can cite the original.
type ImportReport struct {
	Version string `json:"version"`
	// Format is the detected or forced input format.
	Format string `json:"format"`
	// Input is the path the import was read from, as given.
	Input string `json:"input"`
	// Files lists every input file, sorted by path.
	Files []ImportedFile `json:"files"`
	// Origins maps each produced bundle path to where its content came from.
	Origins map[string]Origin `json:"origins"`
	// NotCarried names evidence the input format cannot hold, so an absent source is
	// read as a property of the format rather than of the cluster.
	NotCarried []string `json:"notCarried,omitempty"`
	// CollectedAt is when the input was gathered, when the format records it (a
	// must-gather's timestamp file); analysis measures ages against it.
	CollectedAt *time.Time `json:"collectedAt,omitempty"`
}

// ImportedFile is what one input file was taken for.
type ImportedFile struct {
	Path     string   `json:"path"`
	Detected string   `json:"detected"`
	Status   string   `json:"status"`
	Reason   string   `json:"reason,omitempty"`
	Produced []string `json:"produced,omitempty"`
	// Blocks lists, for loose evidence, each block of lines and what it was read as.
	Blocks []ImportedBlock `json:"blocks,omitempty"`
}

// ImportedBlock is what one contiguous block of lines of an input file was read as.
type ImportedBlock struct {
	// First and Last are the block's first and last lines in the input file.
	First int `json:"first"`
	Last  int `json:"last"`
	// What the block was recognised as; "text" when nothing was.
	What string `json:"what"`
	// Used tells whether the block gave evidence (objects, events, logs, journals).
	Used bool `json:"used"`
	// Fragment is the fragment file the block's lines were kept in, if any.
	Fragment string `json:"fragment,omitempty"`
}

// Count returns how many input files have status.
func (r *ImportReport) Count(status string) int {
	n := 0
	for _, f := range r.Files {
		if f.Status == status {
			n++
		}
	}
	return n
}

// File returns the report entry of an input file, or nil.
func (r *ImportReport) File(path string) *ImportedFile {
	for i := range r.Files {
		if r.Files[i].Path == path {
			return &r.Files[i]
		}
	}
	return nil
}

// ReadImportReport returns the import report b carries, or nil for a bundle podflow
// collected itself.
func ReadImportReport(b *Bundle) (*ImportReport, error) {
	data, err := b.ReadFile(ImportReportPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r ImportReport
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode %s in %q: %w", ImportReportPath, b.Source, err)
	}
	if r.Origins == nil {
		r.Origins = map[string]Origin{}
	}
	return &r, nil
}

// Origin says where a produced bundle file came from.
type Origin struct {
	// Path is the original file, relative to the input.
	Path string `json:"path"`
	// LineOffset is added to a line of the produced file to get the original line.
	LineOffset int `json:"lineOffset,omitempty"`
	// ItemLines holds, for a produced List, the original line where items[i] starts
	// (0 when unknown).
	ItemLines []int `json:"itemLines,omitempty"`
	// ItemPaths holds, for a List gathered from several files, the original file of
	// items[i] ("" means Path).
	ItemPaths []string `json:"itemPaths,omitempty"`
	// SameShape is true when a JSON pointer into the produced file also points at the
	// same value in the original, so citations may keep it.
	SameShape bool `json:"sameShape,omitempty"`
	// About is, for a fragment, what its lines are about when the import could tell
	// from the command that printed them or the describe they belong to.
	About *FragmentAbout `json:"about,omitempty"`
}

// FragmentAbout names what the lines of a fragment are about: an object (Kind, with
// Namespace and Name when the evidence gives them: an APIService describe, the output
// of "kubectl get hpa -n shop") or, when the lines are a command's own output (kubectl's
// "error: …", docker's "Error response from daemon: …", a curl transcript), the
// Client that printed them.
type FragmentAbout struct {
	Kind      string `json:"kind,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	Client    string `json:"client,omitempty"`
	// Command is the command line that printed the lines, when a prompt showed it.
	Command string `json:"command,omitempty"`
}

// Spot is a place in a file: a JSON pointer, a line or line range (both 1-based;
// EndLine 0 for a single line), or both.
type Spot struct {
	Path    string
	Pointer string
	Line    int
	EndLine int
}

// Cite maps a place in the produced file (a pointer, a line range) to the original:
// the original file (the item's own, for a List gathered from several files), the line
// moved by the file's offset or the line the item starts on, and the pointer only when
// it means the same in the original.
func (o Origin) Cite(pointer string, line, endLine int) Spot {
	out := Spot{Path: o.Path, Pointer: pointer, Line: line, EndLine: endLine}
	if out.Line > 0 {
		out.Line += o.LineOffset
		if out.EndLine > 0 {
			out.EndLine += o.LineOffset
		}
	}
	if i, ok := pointerItem(pointer); ok {
		out.Path = o.itemPath(i)
		if line := o.itemLine(i); line > 0 {
			out.Line, out.EndLine = line, 0
		}
	}
	if !o.SameShape {
		out.Pointer = ""
	}
	return out
}

// itemPath is the original file of items[i].
func (o Origin) itemPath(i int) string {
	if i >= 0 && i < len(o.ItemPaths) && o.ItemPaths[i] != "" {
		return o.ItemPaths[i]
	}
	return o.Path
}

// itemLine is the original line of items[i], or 0.
func (o Origin) itemLine(i int) int {
	if i < 0 || i >= len(o.ItemLines) {
		return 0
	}
	return o.ItemLines[i]
}

// pointerItem returns the item index a List pointer (/items/3/...), crictl ps pointer
// (/containers/3/...) or bare array pointer (/3/...) starts with.
func pointerItem(p string) (int, bool) {
	rest, ok := strings.CutPrefix(p, "/items/")
	if !ok {
		rest, ok = strings.CutPrefix(p, "/containers/")
	}
	if !ok {
		if rest, ok = strings.CutPrefix(p, "/"); !ok {
			return 0, false
		}
	}
	seg, _, _ := strings.Cut(rest, "/")
	i, err := strconv.Atoi(seg)
	if err != nil || i < 0 {
		return 0, false
	}
	return i, true
}
