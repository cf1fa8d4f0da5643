package serve

import (
	"context"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// Bounds on connections, so that clients that connect and say nothing (or hold a
// kept-alive connection idle) cannot starve the ones that ask: each connection has
// its handshake and headers within ReadHeaderTimeout, its whole request within
// ReadTimeout, its answer within WriteTimeout (the largest log of a bundle, on a
// slow client), and is closed after IdleTimeout idle; at most MaxConns are open.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 5 * time.Minute
	IdleTimeout       = 60 * time.Second
	MaxConns          = 256
)

// NewHTTPServer is the http.Server podflow serve runs h with: the bounds above, and
// the request contexts derived from base.
func NewHTTPServer(base context.Context, h http.Handler) *http.Server {
	return &http.Server{
		Handler: h, MaxHeaderBytes: MaxHeaderBytes,
		ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: IdleTimeout,
		BaseContext: func(net.Listener) context.Context { return base },
	}
}

// LimitListener bounds ln to MaxConns open connections.
func LimitListener(ln net.Listener) net.Listener { return netutil.LimitListener(ln, MaxConns) }
