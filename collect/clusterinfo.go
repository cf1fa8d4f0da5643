package collect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"podflow.dev/podflow/bundle"
)

// Client is a connection to one cluster.
type Client struct {
	Kube kubernetes.Interface
	// NodeProxy reads kubelet endpoints through the API server; nil skips them.
	NodeProxy NodeProxy
	// Name is the cluster's name in the kubeconfig; Server its API server URL.
	Name   string
	Server string
	// User is the kubeconfig's user entry, which names the identity where the API
	// server does not answer SelfSubjectReview.
	User string

	dates *dateRecorder
}

// Client-side rate limits applied when the config sets none. client-go's defaults (5
// requests per second) would make a cluster with thousands of containers take an hour
// just waiting on the limiter (one log request per container). The load a collection
// puts on the API server is bounded first by Options.Concurrency (requests in flight);
// the rate limit is a ceiling on top, above what 8 requests in flight reach: at 200 a
// second the limiter set the pace of a 5k-pod collection on a loopback control plane
// (5,000 log requests, 24 s, where the same requests 8 at a time took 15 s).
const (
	DefaultQPS   = 1000
	DefaultBurst = 1000
)

// NewClient connects to the cluster cfg points at; name is recorded in the manifest.
func NewClient(cfg *rest.Config, name string) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = DefaultQPS, DefaultBurst
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "podflow-collect"
	}
	if cfg.ContentType == "" && cfg.AcceptContentTypes == "" {
		// Built-in kinds in protobuf: lists decode several times faster than in JSON, on
		// both sides. The bundle is still written as JSON.
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
	}
	d := &dateRecorder{}
	cfg.Wrap(d.wrap)
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create Kubernetes client for %s: %w", cfg.Host, err)
	}
	return &Client{
		Kube:      kube,
		NodeProxy: restNodeProxy{rc: kube.CoreV1().RESTClient()},
		Name:      name,
		Server:    cfg.Host,
		dates:     d,
	}, nil
}

// dateRecorder keeps the Date header of the API server's answer to GET /version,
// with the local time around the request, to measure clock skew.
type dateRecorder struct {
	mu       sync.Mutex
	sent     time.Time
	received time.Time
	date     time.Time
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (d *dateRecorder) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		// A server URL may carry a path prefix (an API gateway in front of the cluster).
		if !strings.HasSuffix(req.URL.Path, "/version") {
			return rt.RoundTrip(req)
		}
		sent := time.Now()
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		if date, perr := http.ParseTime(resp.Header.Get("Date")); perr == nil {
			d.mu.Lock()
			d.sent, d.received, d.date = sent, time.Now(), date
			d.mu.Unlock()
		}
		return resp, err
	})
}

// skew is the server clock minus the local clock, or false when no Date was seen.
func (d *dateRecorder) skew() (time.Duration, bool) {
	if d == nil {
		return 0, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.date.IsZero() {
		return 0, false
	}
	return clockSkew(d.sent, d.received, d.date), true
}

// clockSkew compares the server's Date with the middle of the round trip. Date has a
// resolution of one second and is truncated, so the server's true time is on average
// half a second later, and the result is rounded to whole seconds: finer digits
// would be noise.
func clockSkew(sent, received, date time.Time) time.Duration {
	mid := sent.Add(received.Sub(sent) / 2)
	d := date.Add(500 * time.Millisecond).Sub(mid)
	return time.Duration(math.Round(d.Seconds())) * time.Second
}

// serverInfo is what the reachability check learned.
type serverInfo struct {
	version version.Info
	// err is set when the server answered but refused its version.
	err         error
	skewSeconds float64
	took        time.Duration
}

// serverInfo asks for the server version, which is also the reachability check: an API
// server that does not answer within RequestTimeout fails the whole collection.
func (c *collector) serverInfo(ctx context.Context) (*serverInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	began := time.Now()
	v, err := discovery.ToServerVersionInterfaceWithContext(c.client.Kube.Discovery()).ServerVersionWithContext(ctx)
	info := &serverInfo{took: time.Since(began)}
	server := c.client.Server
	if server == "" {
		server = "the API server"
	}
	switch {
	case err == nil:
		info.version = *v
	case apierrors.IsUnauthorized(err):
		return nil, fmt.Errorf("%s rejected the credentials: %w", server, err)
	case isStatusError(err):
		// It answered, so it is reachable; the lists will say what else it refuses.
		info.err = fmt.Errorf("get server version: %w", err)
	default:
		return nil, fmt.Errorf("cannot reach the Kubernetes API server at %s (waited up to %s): %w", server, c.opts.RequestTimeout, err)
	}
	if skew, ok := c.client.dates.skew(); ok {
		info.skewSeconds = skew.Seconds()
		c.skew = skew
	}
	c.log.WithField("version", info.version.GitVersion).WithField("clockSkewSeconds", info.skewSeconds).Debug("API server reachable")
	return info, nil
}

// isStatusError tells an answer from the API server (it is reachable) from a transport
// failure.
func isStatusError(err error) bool {
	var s apierrors.APIStatus
	return errors.As(err, &s)
}

// clusterVersion is cluster-info/cluster_version.json as Troubleshoot writes it.
type clusterVersion struct {
	Info   *version.Info `json:"info"`
	String string        `json:"string"`
}

func (c *collector) writeClusterInfo(info *serverInfo) error {
	slot := c.reserve("cluster-info")
	if info.err != nil {
		c.finish(slot, outcome{status: bundle.StatusFailed, err: info.err}, info.took)
		return nil
	}
	v := info.version
	if err := c.w.WriteJSON(bundle.ClusterVersionPath, clusterVersion{Info: &v, String: v.GitVersion}); err != nil {
		return err
	}
	c.finish(slot, outcome{status: bundle.StatusOK, files: []string{bundle.ClusterVersionPath}}, info.took)
	return nil
}

// serverNow is the API server's clock at the start of collection.
func (c *collector) serverNow() time.Time {
	return c.start.Add(c.skew)
}
