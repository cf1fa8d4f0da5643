package main

import (
	"go/ast"
	"strconv"
	"strings"
)

// Printing forms that build their message in a helper the call site hands constant text
// to: the text printed is the helper's format with the call's constants filled in.
//
//   - A formatting helper: a function whose body is one `return fmt.Errorf(format, …)` (or
//     fmt.Sprintf, errors.Errorf) with some of its parameters among the arguments.
//     CoreDNS's plugin.Error("forward", err) prints "plugin/forward: …".
//   - An error type that prints its Cause field: runc's rc-era genericError prints
//     "%s:%d: %s caused: %s" with the cause newSystemErrorWithCause(err, "starting
//     container process") was given.
//   - A registry error descriptor: distribution's errcode.ErrorDescriptor{Value:
//     "MANIFEST_UNKNOWN", Message: "manifest unknown"} prints as "manifest unknown:
//     manifest unknown" (the code in lower case, its underscores as spaces, then the
//     message).

// helper is a formatting helper: its format and, per verb, the argument it prints.
type helper struct {
	format string
	params []string   // the helper's parameter names, in order
	args   []ast.Expr // the arguments after the format
	fi     *fileInfo
}

// causeFormat is the format an error type prints its Cause field with, and the position of
// the Cause among the format's verbs.
type causeFormat struct {
	format string
	verb   int
}

// indexForms records the helpers and cause formats of the parsed files.
func (r *resolver) indexForms(files []*fileInfo) {
	r.helpers = map[string]helper{}
	r.causes = map[string]causeFormat{}
	for _, fi := range files {
		for _, d := range fi.f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if fd.Recv != nil && fd.Name.Name == "Error" {
				r.indexCause(fd, fi)
				continue
			}
			if fd.Recv != nil || len(fd.Body.List) != 1 {
				continue
			}
			ret, ok := fd.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 {
				continue
			}
			call, ok := ret.Results[0].(*ast.CallExpr)
			if !ok || len(call.Args) < 2 || !r.isFormatCall(call, fi) {
				continue
			}
			format, ok := r.str(call.Args[0], fi, nil)
			if !ok {
				continue
			}
			var params []string
			for _, f := range fd.Type.Params.List {
				for _, n := range f.Names {
					params = append(params, n.Name)
				}
			}
			r.helpers[fi.pkg+"."+fd.Name.Name] = helper{format: format, params: params, args: call.Args[1:], fi: fi}
		}
	}
}

// indexCause records the format an Error method prints its receiver's Cause field with.
func (r *resolver) indexCause(fd *ast.FuncDecl, fi *fileInfo) {
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		ret, ok := n.(*ast.ReturnStmt)
		if !ok || len(ret.Results) != 1 {
			return true
		}
		call, ok := ret.Results[0].(*ast.CallExpr)
		if !ok || len(call.Args) < 2 || !r.isFormatCall(call, fi) {
			return true
		}
		format, ok := r.str(call.Args[0], fi, nil)
		if !ok {
			return true
		}
		for i, a := range call.Args[1:] {
			if sel, ok := a.(*ast.SelectorExpr); ok && sel.Sel.Name == "Cause" {
				r.causes[fi.pkg] = causeFormat{format: format, verb: i}
			}
		}
		return true
	})
}

// isFormatCall reports whether call is fmt.Errorf, fmt.Sprintf or an errors package's
// Errorf.
func (r *resolver) isFormatCall(call *ast.CallExpr, fi *fileInfo) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	pkg := fi.imports[id.Name]
	return pkg == "fmt" && (sel.Sel.Name == "Errorf" || sel.Sel.Name == "Sprintf") || errorPkgs[pkg] && sel.Sel.Name == "Errorf"
}

// helperSite is the message a call to a formatting helper prints, when the call gives it
// constant text; ok is false for any other call.
func (r *resolver) helperSite(call *ast.CallExpr, fi *fileInfo, locals map[string]ast.Expr) (site, bool) {
	key := ""
	switch f := call.Fun.(type) {
	case *ast.Ident:
		key = fi.pkg + "." + f.Name
	case *ast.SelectorExpr:
		if id, ok := f.X.(*ast.Ident); ok {
			if ip, ok := fi.imports[id.Name]; ok {
				key = ip + "." + f.Sel.Name
			}
		}
	}
	h, ok := r.helpers[key]
	if !ok || len(call.Args) != len(h.params) {
		return site{}, false
	}
	filled := false
	values := make([]*string, len(h.args))
	for i, a := range h.args {
		if id, ok := a.(*ast.Ident); ok {
			for j, p := range h.params {
				if p == id.Name {
					if s, ok := r.str(call.Args[j], fi, locals); ok {
						values[i], filled = &s, true
					}
				}
			}
			if values[i] != nil {
				continue
			}
		}
		if s, ok := r.str(a, h.fi, nil); ok {
			values[i] = &s
		}
	}
	if !filled {
		return site{}, false
	}
	return site{kind: "error", level: "error", template: fillVerbs(h.format, values)}, true
}

// causeSite is the message an error built with a constant cause prints (runc's
// newSystemErrorWithCause(err, "…") and …Causef(err, "… %s", x)).
func (r *resolver) causeSite(name string, args []ast.Expr, fi *fileInfo, locals map[string]ast.Expr) (site, bool) {
	cf, ok := r.causes[fi.pkg]
	if !ok || !strings.Contains(name, "WithCause") || len(args) < 2 {
		return site{}, false
	}
	cause, ok := r.str(args[1], fi, locals)
	if !ok {
		return site{}, false
	}
	if !strings.HasSuffix(name, "f") {
		cause = strings.ReplaceAll(cause, "%", "%%")
	}
	values := make([]*string, cf.verb+1)
	values[cf.verb] = &cause
	return site{kind: "error", level: "error", template: fillVerbs(cf.format, values, true)}, true
}

// fillVerbs replaces the format's verbs that have a value with it (%q quotes it); a verb
// without one stays. raw says the values are format text themselves (kept as they are),
// else a '%' in a value is escaped.
func fillVerbs(format string, values []*string, raw ...bool) string {
	keep := len(raw) > 0 && raw[0]
	var b strings.Builder
	n := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.*[]", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			b.WriteString(format[i:])
			break
		}
		if format[j] == '%' {
			b.WriteString("%%")
			i = j
			continue
		}
		verb := format[i : j+1]
		if n < len(values) && values[n] != nil && strings.IndexByte("svqw", format[j]) >= 0 {
			v := *values[n]
			if format[j] == 'q' {
				v = strconv.Quote(v)
			}
			if !keep {
				v = strings.ReplaceAll(v, "%", "%%")
			}
			b.WriteString(v)
		} else {
			b.WriteString(verb)
		}
		n++
		i = j
	}
	return b.String()
}

// descriptorSite is the message a registry error descriptor prints: its code in lower
// case with spaces, then its message.
func (r *resolver) descriptorSite(cl *ast.CompositeLit, fi *fileInfo) (site, bool) {
	name := ""
	switch t := cl.Type.(type) {
	case *ast.Ident:
		name = t.Name
	case *ast.SelectorExpr:
		name = t.Sel.Name
	}
	if name != "ErrorDescriptor" {
		return site{}, false
	}
	var value, message string
	for _, el := range cl.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		k, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		s, ok := r.str(kv.Value, fi, nil)
		if !ok {
			continue
		}
		switch k.Name {
		case "Value":
			value = s
		case "Message":
			message = s
		}
	}
	if value == "" || message == "" {
		return site{}, false
	}
	code := strings.ToLower(strings.ReplaceAll(value, "_", " "))
	return site{kind: "error", level: "error", reason: value, template: strings.ReplaceAll(code, "%", "%%") + ": " + message}, true
}

// conditionSite is the message of a status condition set through a helper:
// setCondition(obj, type, status, reason, "message %v", args…). The message is the first
// constant argument with a space in it; the reason is the argument before it when that is
// a reason word.
func (r *resolver) conditionSites(args []ast.Expr, fi *fileInfo, locals map[string]ast.Expr, consumed map[*ast.CallExpr]bool) []site {
	for i, a := range args {
		t, ok := r.str(a, fi, locals)
		if !ok || !strings.Contains(t, " ") {
			continue
		}
		markSprintf(a, consumed)
		s := site{kind: "message", template: t}
		// printed as is only when nothing formats it: no arguments follow and it is no
		// fmt.Sprintf of its own
		s.plain = i == len(args)-1 && !r.isFormat(a, fi, locals) && !strings.Contains(t, "%")
		if i > 0 {
			if reason, ok := r.str(args[i-1], fi, locals); ok && isReasonWord(reason) {
				s.reason = reason
			}
		}
		out := []site{s}
		if s.reason != "" {
			out = append(out, site{kind: "reason", template: s.reason, plain: true, reason: s.reason})
		}
		return out
	}
	return nil
}
