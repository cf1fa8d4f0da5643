package analyze

// eventKeys are the events a load has added, by UID (or namespace/name when an event
// has none), so that an event two bundles hold is added once. A UID in the form
// Kubernetes gives one (a UUID in lowercase hex) is kept as its 16 bytes: held as the
// strings the decoder made, at 80k pods the 800k events' UIDs were about 40 MB kept
// through the decode of every event, the load's first peak, for keys alone.
type eventKeys struct {
	uuids map[[16]byte]struct{}
	other map[string]struct{}
}

// add records key and reports whether it is new.
func (k *eventKeys) add(key string) bool {
	if u, ok := parseUUID(key); ok {
		if _, seen := k.uuids[u]; seen {
			return false
		}
		if k.uuids == nil {
			k.uuids = map[[16]byte]struct{}{}
		}
		k.uuids[u] = struct{}{}
		return true
	}
	if _, seen := k.other[key]; seen {
		return false
	}
	if k.other == nil {
		k.other = map[string]struct{}{}
	}
	k.other[key] = struct{}{}
	return true
}

// has reports whether key was added.
func (k *eventKeys) has(key string) bool {
	if u, ok := parseUUID(key); ok {
		_, seen := k.uuids[u]
		return seen
	}
	_, seen := k.other[key]
	return seen
}

// parseUUID is s's 16 bytes when s is a UUID written as Kubernetes writes one:
// 8-4-4-4-12 lowercase hex digits. Only that one spelling is read, so two different
// strings never give the same bytes.
func parseUUID(s string) (u [16]byte, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	for i, n := 0, 0; n < 16; n++ {
		if s[i] == '-' {
			i++
		}
		hi, lo := lowerHex(s[i]), lowerHex(s[i+1])
		if hi < 0 || lo < 0 {
			return u, false
		}
		u[n] = byte(hi<<4 | lo)
		i += 2
	}
	return u, true
}

func lowerHex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}
