package serve

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
)

// TestServerBoundsConnections: every time-out that frees a connection a client holds
// without asking is set, and the listener accepts no more than MaxConns at once.
func TestServerBoundsConnections(t *testing.T) {
	hs := NewHTTPServer(context.Background(), http.NotFoundHandler())
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout <= 0 || hs.WriteTimeout <= 0 || hs.IdleTimeout <= 0 || hs.MaxHeaderBytes <= 0 {
		t.Fatalf("unbounded server: %+v", hs)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(raw)
	defer ln.Close()
	var conns []net.Conn
	var mu sync.Mutex
	accepted := make(chan struct{}, MaxConns+1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			accepted <- struct{}{}
		}
	}()
	var clients []net.Conn
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for range MaxConns + 1 {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	for range MaxConns {
		<-accepted
	}
	// The one over the bound is accepted only once another is closed.
	mu.Lock()
	first := conns[0]
	mu.Unlock()
	select {
	case <-accepted:
		t.Fatalf("connection %d accepted while %d were open", MaxConns+1, MaxConns)
	default:
	}
	first.Close()
	<-accepted
	mu.Lock()
	defer mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}
