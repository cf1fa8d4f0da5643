// Package index is podflow's store of many analyses: one schema with migrations for
// SQLite (the default, one file, pure Go) and PostgreSQL (a team's, with row-level
// security per tenant and a job table for workers). Every statement is a constant
// with parameters; nothing is built from input.
package index

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Dialect is the kind of database behind a store.
type Dialect string

// The dialects a store speaks: a SQLite file, or a PostgreSQL server.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DefaultTenant is the tenant of a store opened without one.
const DefaultTenant = "default"

// Options open a store.
type Options struct {
	// Tenant scopes every row read and written; PostgreSQL enforces it with row-level
	// security (the podflow.tenant setting of each connection).
	Tenant string
	// ReadOnly opens SQLite with mode=ro and query_only, and runs PostgreSQL
	// statements in read-only transactions under the podflow_reader role.
	ReadOnly bool
}

// Store is an open index.
type Store struct {
	db       *sql.DB
	dialect  Dialect
	tenant   string
	readOnly bool
	// Where is the file or server, for messages (never a password).
	Where string

	mu    sync.Mutex
	stmts map[string]*sql.Stmt

	// writing serializes this process's write transactions on a SQLite file. SQLite
	// takes one writer at a time anyway; a transaction that finds another's lock is
	// told busy and sleeps, longer each try (up to a tenth of a second), while one
	// waiting here is woken the moment the other commits: a worker's claim of its next
	// jobs then waits for the writer's commit, not for a sleep that keeps the
	// analyzers without work.
	writing sync.Mutex
}

// IsPostgres reports whether target names a PostgreSQL server rather than a file.
func IsPostgres(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// Open opens (and creates, and migrates) the store at target: a PostgreSQL URL or a
// SQLite file path.
func Open(ctx context.Context, target string, opts Options) (*Store, error) {
	if opts.Tenant == "" {
		opts.Tenant = DefaultTenant
	}
	var s *Store
	var err error
	if IsPostgres(target) {
		s, err = openPostgres(ctx, target, opts)
	} else {
		s, err = openSQLite(ctx, target, opts)
	}
	if err != nil {
		return nil, err
	}
	if !opts.ReadOnly {
		if err := s.migrate(ctx); err != nil {
			s.db.Close()
			return nil, fmt.Errorf("migrate index %s: %w", s.Where, err)
		}
	} else if err := s.checkVersion(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// openSQLite opens a SQLite file: created with mode 0600 before SQLite touches it (its
// -wal and -shm files take the same mode), in WAL mode with a busy timeout so readers
// and one writer do not wait on each other. A SQLite file must sit on a local disk:
// its locks do not hold on a network filesystem.
func openSQLite(ctx context.Context, path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("open index: no database path")
	}
	if opts.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("open index %q: %w", path, err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("open index %q: %w", path, err)
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("open index %q: %w", path, err)
		}
		f.Close()
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(1)")
	if opts.ReadOnly {
		q.Set("mode", "ro")
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open index %q: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index %q: %w", path, err)
	}
	return &Store{db: db, dialect: SQLite, tenant: opts.Tenant, readOnly: opts.ReadOnly, Where: path}, nil
}

// openPostgres connects with pgx; every new connection sets podflow.tenant, which the
// row-level security policies compare each row's tenant with.
func openPostgres(ctx context.Context, target string, opts Options) (*Store, error) {
	cfg, err := pgx.ParseConfig(target)
	if err != nil {
		return nil, fmt.Errorf("open index: parse PostgreSQL URL: %w", err)
	}
	where := fmt.Sprintf("postgres://%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
	tenant := opts.Tenant
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "SELECT set_config('podflow.tenant', $1, false)", tenant)
		return err
	}))
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open index %s: %w", where, err)
	}
	return &Store{db: db, dialect: Postgres, tenant: opts.Tenant, readOnly: opts.ReadOnly, Where: where}, nil
}

// Close closes the store.
func (s *Store) Close() error {
	if s.dialect == SQLite && !s.readOnly {
		// SQLite's advice for a connection that wrote: refresh the planner's statistics
		// where they are stale, cheaply.
		_, _ = s.db.Exec("PRAGMA optimize") // advice to the planner: closing does not depend on it
	}
	s.mu.Lock()
	for _, p := range s.stmts {
		p.Close()
	}
	s.stmts = nil
	s.mu.Unlock()
	return s.db.Close()
}

// Dialect says which database the store is.
func (s *Store) Dialect() Dialect { return s.dialect }

// Tenant is the tenant the store reads and writes.
func (s *Store) Tenant() string { return s.tenant }

// q adapts a constant statement written with ? placeholders to the dialect: PostgreSQL
// numbers them ($1, $2, ...). Statements hold no string literals with a ?.
func (s *Store) q(stmt string) string {
	if s.dialect != Postgres {
		return stmt
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(stmt); i++ {
		if stmt[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(stmt[i])
	}
	return b.String()
}

// prepared returns the statement prepared once per store, so the statements each
// ticket runs are parsed once, not per ticket.
func (s *Store) prepared(ctx context.Context, stmt string) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.stmts[stmt]; p != nil {
		return p, nil
	}
	p, err := s.db.PrepareContext(ctx, s.q(stmt))
	if err != nil {
		return nil, err
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[stmt] = p
	return p, nil
}

// txExec runs a prepared statement in tx.
func (s *Store) txExec(ctx context.Context, tx *sql.Tx, stmt string, args ...any) error {
	p, err := s.prepared(ctx, stmt)
	if err != nil {
		return err
	}
	_, err = tx.StmtContext(ctx, p).ExecContext(ctx, args...)
	return err
}

// txRow runs a prepared query of one row in tx.
func (s *Store) txRow(ctx context.Context, tx *sql.Tx, stmt string, args ...any) *sql.Row {
	p, err := s.prepared(ctx, stmt)
	if err != nil {
		// QueryRowContext on a closed statement reports the error at Scan.
		return tx.QueryRowContext(ctx, s.q(stmt), args...)
	}
	return tx.StmtContext(ctx, p).QueryRowContext(ctx, args...)
}

func (s *Store) exec(ctx context.Context, stmt string, args ...any) (sql.Result, error) {
	return s.db.ExecContext(ctx, s.q(stmt), args...)
}

func (s *Store) query(ctx context.Context, stmt string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, s.q(stmt), args...)
}

func (s *Store) queryRow(ctx context.Context, stmt string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.q(stmt), args...)
}

// tx runs fn in one transaction.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.dialect == SQLite {
		s.writing.Lock()
		defer s.writing.Unlock()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback() // fn's error is the one to report
		return err
	}
	return tx.Commit()
}
