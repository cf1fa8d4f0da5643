// Command floor is the scale phase's floor: it sends the API server the requests
// `podflow collect -A` sends (every list of the bundle layout except Secrets, paginated
// 500 items at a time, then the current log of every container that has run), in
// parallel, and throws the answers away. It reads only what it needs to go on (a page's
// continue token, the pods' containers), so its time is what the API server and the
// network cost, with as little client-side work as possible.
//
//	floor -kubeconfig collector.kubeconfig -concurrency 8
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"podflow.dev/podflow/bundle"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the identity to read as")
	concurrency := flag.Int("concurrency", 8, "requests in flight at once")
	pageSize := flag.Int("page-size", 500, "items per list page")
	tailLines := flag.Int("tail-lines", 2000, "lines of each container log")
	flag.Parse()
	if err := run(*kubeconfig, *concurrency, *pageSize, *tailLines); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// page is what the floor reads of a list answer.
type page struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
}

// podPage is what the floor reads of a pod list answer: enough to name the logs.
type podPage struct {
	Metadata struct {
		Continue string `json:"continue"`
	} `json:"metadata"`
	Items []struct {
		Metadata struct {
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"metadata"`
		Status struct {
			ContainerStatuses []struct {
				Name        string `json:"name"`
				ContainerID string `json:"containerID"`
				State       struct {
					Running *struct{} `json:"running"`
				} `json:"state"`
			} `json:"containerStatuses"`
		} `json:"status"`
	} `json:"items"`
}

type counter struct{ requests, bytes atomic.Int64 }

func run(kubeconfig string, concurrency, pageSize, tailLines int) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	// No client-side rate limit: the bound is the number of requests in flight.
	cfg.QPS, cfg.Burst = -1, 0
	cfg.ContentType, cfg.AcceptContentTypes = "application/json", "application/json"
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	base, err := url.Parse(cfg.Host)
	if err != nil {
		return err
	}
	var n counter
	get := func(ctx context.Context, u string) ([]byte, error) {
		req, err := newRequest(ctx, u)
		if err != nil {
			return nil, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		n.requests.Add(1)
		n.bytes.Add(int64(len(body)))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
		}
		return body, nil
	}
	ctx := context.Background()
	start := time.Now()
	sem := make(chan struct{}, concurrency)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		errs    []error
		targets [][3]string
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for _, l := range bundle.Lists() {
		if l.Name == bundle.KindSecrets {
			continue // podflow collect does not read Secrets unless asked
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			cont := ""
			for {
				sem <- struct{}{}
				body, err := get(ctx, listURL(base, l, pageSize, cont))
				<-sem
				if err != nil {
					fail(err)
					return
				}
				if l.Name == bundle.KindPods {
					var p podPage
					if err := json.Unmarshal(body, &p); err != nil {
						fail(err)
						return
					}
					mu.Lock()
					for _, it := range p.Items {
						for _, cs := range it.Status.ContainerStatuses {
							if cs.ContainerID != "" || cs.State.Running != nil {
								targets = append(targets, [3]string{it.Metadata.Namespace, it.Metadata.Name, cs.Name})
							}
						}
					}
					mu.Unlock()
					cont = p.Metadata.Continue
				} else {
					var p page
					if err := json.Unmarshal(body, &p); err != nil {
						fail(err)
						return
					}
					cont = p.Metadata.Continue
				}
				if cont == "" {
					return
				}
			}
		}()
	}
	wg.Wait()
	lists := n.requests.Load()
	for _, t := range targets {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			u := *base
			u.Path = path.Join(base.Path, "/api/v1/namespaces", t[0], "pods", t[1], "log")
			u.RawQuery = url.Values{"container": {t[2]}, "tailLines": {strconv.Itoa(tailLines)}, "timestamps": {"true"}}.Encode()
			if _, err := get(ctx, u.String()); err != nil {
				fail(err)
			}
		}()
	}
	wg.Wait()
	fmt.Printf("floor: %d list pages, %d logs, %d requests, %.1f MB in %s\n",
		lists, len(targets), n.requests.Load(), float64(n.bytes.Load())/1e6, time.Since(start).Round(time.Millisecond))
	if len(errs) > 0 {
		return fmt.Errorf("%d requests failed, the first: %w", len(errs), errs[0])
	}
	return nil
}

func listURL(base *url.URL, l bundle.ResourceList, limit int, cont string) string {
	u := *base
	prefix := "/api/" + l.Version
	if l.Group != "" {
		prefix = "/apis/" + l.Group + "/" + l.Version
	}
	if l.Namespace != "" {
		prefix += "/namespaces/" + l.Namespace
	}
	u.Path = path.Join(base.Path, prefix, l.Resource)
	q := url.Values{"limit": {strconv.Itoa(limit)}}
	if cont != "" {
		q.Set("continue", cont)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func newRequest(ctx context.Context, u string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	return req, nil
}
