package bundle

import "bytes"

// indentJSON appends to dst the JSON document src indented as json.Indent(dst, src, "",
// "  ") does it, byte for byte. src must be valid compact JSON, as json.Marshal returns.
// json.Indent runs its validating scanner over every byte (more CPU than encoding the
// document did); here strings are copied whole and only punctuation between them is
// looked at, which matters when a collection writes thousands of lists.
func indentJSON(dst, src []byte) []byte {
	depth := 0
	// open is set after { or [ until what follows shows whether the value is empty,
	// which stays {} or [].
	open := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			dst = newline(dst, depth)
		}
		switch c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			dst = newline(dst, depth)
		case ':':
			dst = append(dst, c, ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				dst = newline(dst, depth)
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stringEnd returns the index just past the string that starts with the quote at
// src[start].
func stringEnd(src []byte, start int) int {
	i := start + 1
	for {
		j := bytes.IndexAny(src[i:], `"\`)
		if j < 0 {
			return len(src)
		}
		i += j
		if src[i] == '"' {
			return i + 1
		}
		i += 2 // an escape: the backslash and the byte it escapes
		if i >= len(src) {
			return len(src)
		}
	}
}

const indentSpaces = "                                                                "

func newline(dst []byte, depth int) []byte {
	dst = append(dst, '\n')
	for n := 2 * depth; n > 0; {
		k := min(n, len(indentSpaces))
		dst = append(dst, indentSpaces[:k]...)
		n -= k
	}
	return dst
}
