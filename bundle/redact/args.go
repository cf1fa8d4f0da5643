package redact

import (
	"bytes"
	"regexp"
	"strings"
)

// RuleCredentialArgument masks the value of a credential passed as a separate
// command-line argument: --password X, --requirepass X, --token X, -p X (sshpass,
// docker/oc login, mysql), -a X (redis-cli), in a process list, a log, a shell's
// -c string or a container's command and args.
const RuleCredentialArgument = "credential-argument"

// argKeywords are the keywords that make a line worth reading for arguments: every
// credential flag's name holds one, and -p and -a only count next to the tools that
// read a password from them.
var argKeywords = keywords("pass", "pwd", "token", "secret", "key", "cred", "auth", "sshpass", "login", "mysql", "mariadb", "redis-cli")

// credArgRE finds a flag followed by a separate value: after spaces, or, in a JSON
// array written on one line, after `", "`.
var credArgRE = regexp.MustCompile(`(?:^|[\s"'\[,(;&|])(--?[A-Za-z][A-Za-z0-9_.-]*)(?:[ \t]+|\\?["'][ \t]*,[ \t]*\\?["'])\\?["']?([^\s"'\\,\])-][^\s"'\\,\])]*)`)

// credentialFlagWords are the last words of a flag name that make its value a
// credential; a flag naming where one is (--token-file, --password-env) ends with
// another word and keeps its value.
var credentialFlagWords = map[string]bool{
	"password": true, "passwd": true, "pass": true, "pwd": true, "requirepass": true, "masterauth": true,
	"token": true, "secret": true, "apikey": true, "credential": true, "credentials": true, "passphrase": true,
}

// credentialFlag reports whether flag (with its dashes) passes a credential as its
// next argument on line.
func credentialFlag(flag string, line []byte) bool {
	name := strings.ToLower(strings.TrimLeft(flag, "-"))
	if strings.HasPrefix(flag, "--") || len(name) > 1 {
		words := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
		if len(words) == 0 {
			return false
		}
		last := words[len(words)-1]
		if credentialFlagWords[last] {
			return true
		}
		// --api-key, --access-key, --secret-key, --auth-token, --client-secret
		if len(words) > 1 && last == "key" {
			switch words[len(words)-2] {
			case "api", "access", "secret", "private", "auth", "master", "encryption":
				return true
			}
		}
		return false
	}
	low := bytes.ToLower(line)
	switch name {
	case "p":
		for _, tool := range []string{"sshpass", "login", "mysql", "mariadb"} {
			if bytes.Contains(low, []byte(tool)) {
				return true
			}
		}
	case "a":
		return bytes.Contains(low, []byte("redis-cli"))
	}
	return false
}

// scanCredentialArgs masks the values of credential flags in one line.
func scanCredentialArgs(line []byte) [][2]int {
	var out [][2]int
	for _, m := range credArgRE.FindAllSubmatchIndex(line, -1) {
		flag, value := string(line[m[2]:m[3]]), string(line[m[4]:m[5]])
		if !credentialFlag(flag, line) || !plausibleSecret(flag, value) {
			continue
		}
		out = append(out, [2]int{m[4], m[5]})
	}
	return out
}

// credentialArgPairs returns the indexes of the strings of an argument list (a
// container's command or args, written as separate JSON strings) that are the value
// of the credential flag before them.
func credentialArgPairs(args []string) []int {
	var out []int
	joined := []byte(strings.Join(args, " "))
	for i := 0; i+1 < len(args); i++ {
		flag := args[i]
		if !strings.HasPrefix(flag, "-") || strings.ContainsAny(flag, " =") || !credentialFlag(flag, joined) {
			continue
		}
		if v := args[i+1]; !strings.HasPrefix(v, "-") && plausibleSecret(flag, v) {
			out = append(out, i+1)
			i++
		}
	}
	return out
}
