package redact

import (
	"fmt"

	"github.com/sirupsen/logrus"
)

// Flag names, shared by every command that writes a bundle.
const (
	FlagConfig          = "redact-config"
	FlagKey             = "redact-key"
	FlagNoRedact        = "no-redact"
	FlagContainsSecrets = "i-understand-bundle-contains-secrets"
)

// Flags are the redaction flags of a command that writes a bundle; the command
// registers them (flags live in cmd) under the Flag* names, then
//
//	policy, err := o.redact.Policy(logger) // then WriterOptions.Filter = policy
//
// and records policy.Redaction() in the manifest once every file is written.
type Flags struct {
	ConfigFile      string
	Key             string
	NoRedact        bool
	ContainsSecrets bool
	SkipLeakScan    bool
}

// UsageError reports a misuse of the redaction flags; commands exit with their usage
// code for it.
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// Policy checks the flags and builds the policy they describe. Flag misuse is a
// *UsageError; a bad config file is a *ConfigError.
func (f *Flags) Policy(log logrus.FieldLogger) (*Policy, error) {
	if f.NoRedact {
		if !f.ContainsSecrets {
			return nil, &UsageError{msg: fmt.Sprintf("--%s writes secrets into the bundle: add --%s to confirm", FlagNoRedact, FlagContainsSecrets)}
		}
		if f.ConfigFile != "" || f.Key != "" {
			return nil, &UsageError{msg: fmt.Sprintf("--%s cannot be combined with --%s or --%s", FlagNoRedact, FlagConfig, FlagKey)}
		}
		return New(Options{Disabled: true, Logger: log})
	}
	if f.ContainsSecrets {
		return nil, &UsageError{msg: fmt.Sprintf("--%s only goes with --%s", FlagContainsSecrets, FlagNoRedact)}
	}
	opts := Options{Logger: log, Key: []byte(f.Key)}
	if f.ConfigFile != "" {
		c, err := LoadConfig(f.ConfigFile)
		if err != nil {
			return nil, err
		}
		opts.Config = c
	}
	return New(opts)
}
