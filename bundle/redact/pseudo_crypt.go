package redact

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"

	"sigs.k8s.io/yaml"

	"podflow.dev/podflow/untrusted/yamlbudget"
)

// A mapping reverses pseudonyms, so a user may keep it encrypted at rest with a
// passphrase: AES-256-GCM under a key derived with PBKDF2-SHA256. The envelope names
// its scheme so a later podflow can change it and still read old files.
const (
	mappingCipher     = "aes-256-gcm+pbkdf2-sha256"
	mappingIterations = 600_000 // OWASP's 2023 figure for PBKDF2-HMAC-SHA256
	// maxMappingIterations bounds the count a mapping file may ask for: ten times
	// what podflow writes, a few seconds.
	maxMappingIterations = 10 * mappingIterations
)

// ErrMappingPassphrase reports an encrypted mapping read without its passphrase, or
// with the wrong one.
var ErrMappingPassphrase = errors.New("mapping passphrase missing or wrong")

type mappingEnvelope struct {
	Encrypted  string `json:"encrypted"`
	Iterations int    `json:"iterations"`
	Salt       []byte `json:"salt"`
	Nonce      []byte `json:"nonce"`
	Data       []byte `json:"data"`
}

func mappingKey(passphrase []byte, salt []byte, iterations int) ([]byte, error) {
	return pbkdf2.Key(sha256.New, string(passphrase), salt, iterations, 32)
}

// sealMapping encrypts a mapping's plain bytes into an envelope document.
func sealMapping(plain, passphrase []byte) ([]byte, error) {
	env := mappingEnvelope{Encrypted: mappingCipher, Iterations: mappingIterations,
		Salt: make([]byte, 16), Nonce: make([]byte, 12)}
	if _, err := rand.Read(env.Salt); err != nil {
		return nil, err
	}
	if _, err := rand.Read(env.Nonce); err != nil {
		return nil, err
	}
	gcm, err := mappingAEAD(passphrase, env.Salt, env.Iterations)
	if err != nil {
		return nil, err
	}
	env.Data = gcm.Seal(nil, env.Nonce, plain, []byte(mappingCipher))
	out, err := yaml.Marshal(env)
	if err != nil {
		return nil, err
	}
	return append([]byte("# podflow pseudonymization mapping, encrypted with a passphrase.\n"), out...), nil
}

// openMapping returns the plain bytes of a mapping file: data itself when it is not an
// envelope, else the decrypted content.
func openMapping(data, passphrase []byte) ([]byte, error) {
	var env mappingEnvelope
	if err := yamlbudget.Unmarshal(data, &env); err != nil || env.Encrypted == "" {
		return data, nil // not an envelope: a plain mapping, parsed (and checked) by the caller
	}
	if env.Encrypted != mappingCipher {
		return nil, fmt.Errorf("encrypted with %q, this podflow knows %q", env.Encrypted, mappingCipher)
	}
	if len(passphrase) == 0 {
		return nil, fmt.Errorf("the mapping is encrypted: %w (give --mapping-passphrase-file)", ErrMappingPassphrase)
	}
	if env.Iterations < 1 || len(env.Nonce) != 12 {
		return nil, errors.New("damaged encrypted mapping: bad iterations or nonce")
	}
	if env.Iterations > maxMappingIterations {
		// The count is read from the file: an unbounded one costs minutes of key
		// derivation before the passphrase is even checked.
		return nil, fmt.Errorf("damaged encrypted mapping: %d key-derivation iterations, more than the %d podflow accepts", env.Iterations, maxMappingIterations)
	}
	gcm, err := mappingAEAD(passphrase, env.Salt, env.Iterations)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, env.Nonce, env.Data, []byte(mappingCipher))
	if err != nil {
		return nil, fmt.Errorf("%w, or the file is damaged", ErrMappingPassphrase)
	}
	return plain, nil
}

func mappingAEAD(passphrase, salt []byte, iterations int) (cipher.AEAD, error) {
	key, err := mappingKey(passphrase, salt, iterations)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
