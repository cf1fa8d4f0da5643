package importer

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"

	"podflow.dev/podflow/bundle"
)

// pasteSize is the size of the generated paste the loose benchmarks read.
const pasteSize = 4 << 20

// unrecognizedPaste is pasted text no reader of the import recognizes (an application's
// own log and prose between them), the shape that costs the import most per byte: every
// line is tried as every kind of output and kept as text.
func unrecognizedPaste(size int) []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < size; i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&buf, "2024-03-01 12:%02d:%02d.%03d INFO  [http-nio-8080-exec-%d] c.e.shop.OrderController : order %d accepted for customer %d in %d ms\n",
				i/60%60, i%60, i%1000, i%16, i, i*7%100000, i%250)
		case 1:
			fmt.Fprintf(&buf, "we restarted the service at about %d:%02d and it looked fine for a while, then requests slowed down again (ticket %d)\n", i%24, i%60, i)
		case 2:
			fmt.Fprintf(&buf, "    at com.example.shop.repository.OrderRepository.save(OrderRepository.java:%d)\n", i%500)
		default:
			fmt.Fprintf(&buf, "{\"ts\":%d,\"lvl\":\"debug\",\"route\":\"/api/v1/orders/%d\",\"latency_ms\":%d}\n", 1709294400+i, i, i%97)
		}
	}
	return buf.Bytes()
}

// BenchmarkLooseUnrecognized imports a 4 MiB paste of unrecognized text the way
// `podflow analyze` reads standard input; BenchmarkLooseFloor scans the same input into
// lines with bufio, the least any reader of it does. Compare MB/s and B/op side by side:
//
//	go test ./importer -run '^$' -bench 'Loose' -benchmem
func BenchmarkLooseUnrecognized(b *testing.B) {
	data := unrecognizedPaste(pasteSize)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		src, err := bundle.New(StdinName, map[string][]byte{StdinName: data})
		if err != nil {
			b.Fatal(err)
		}
		files := importLoose(src, newReport(FormatLoose, StdinName))
		if len(files) == 0 {
			b.Fatal("the paste produced no file")
		}
	}
}

func BenchmarkLooseFloor(b *testing.B) {
	data := unrecognizedPaste(pasteSize)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		n := 0
		for sc.Scan() {
			n += len(sc.Bytes())
		}
		if n == 0 {
			b.Fatal("no lines")
		}
	}
}
