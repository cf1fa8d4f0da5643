package serve

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The Kubernetes API's OpenAPI documents (v1.37), for the group versions the server
// serves, without their operations: kubectl explain reads v3, and clients that
// validate or describe fields read v2. Made by openapi/gen.go from the Kubernetes source.
//
//go:embed openapi/v2.json.gz openapi/v2.pb.gz openapi/v3/*.json.gz
var openapiFS embed.FS

const (
	mimeOpenAPIv2Proto = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
)

// openapiDoc is one embedded document, decompressed once on first use.
type openapiDoc struct {
	once sync.Once
	name string
	data []byte
	hash string
	err  error
}

func (d *openapiDoc) load() ([]byte, string, error) {
	d.once.Do(func() {
		raw, err := openapiFS.ReadFile(d.name)
		if err != nil {
			d.err = err
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			d.err = err
			return
		}
		d.data, d.err = io.ReadAll(zr)
		sum := sha512.Sum512(d.data)
		d.hash = strings.ToUpper(hex.EncodeToString(sum[:]))
	})
	return d.data, d.hash, d.err
}

var (
	openapiV2JSON  = &openapiDoc{name: "openapi/v2.json.gz"}
	openapiV2Proto = &openapiDoc{name: "openapi/v2.pb.gz"}
	// openapiV3 is each group version's document, by its path (api/v1, apis/apps/v1).
	openapiV3 = func() map[string]*openapiDoc {
		out := map[string]*openapiDoc{}
		entries, _ := openapiFS.ReadDir("openapi/v3")
		for _, e := range entries {
			gv := strings.TrimSuffix(e.Name(), ".json.gz")
			// api_v1 -> api/v1; apis_apps_v1 -> apis/apps/v1 (group names hold dots, never "_").
			out[strings.ReplaceAll(gv, "_", "/")] = &openapiDoc{name: path.Join("openapi/v3", e.Name())}
		}
		return out
	}()
)

// openapi answers /openapi/v2, /openapi/v3 and /openapi/v3/GROUPVERSION.
func (s *Server) openapi(w http.ResponseWriter, r *http.Request, p string) {
	switch {
	case p == "/openapi/v2":
		doc, typ := openapiV2JSON, "application/json"
		// The first of the two the client accepts (kubectl asks for protobuf).
		for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
			mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
			if strings.HasPrefix(mt, "application/com.github.proto-openapi.spec.v2") {
				doc, typ = openapiV2Proto, mimeOpenAPIv2Proto
				break
			}
			if mt == "application/json" || mt == "*/*" {
				break
			}
		}
		s.writeOpenAPI(w, r, doc, typ)
	case p == "/openapi/v3" || p == "/openapi/v3/":
		var gvs []string
		for gv := range openapiV3 {
			gvs = append(gvs, gv)
		}
		sort.Strings(gvs)
		paths := map[string]any{}
		for _, gv := range gvs {
			_, hash, err := openapiV3[gv].load()
			if err != nil {
				writeStatus(w, err)
				return
			}
			paths[gv] = map[string]string{"serverRelativeURL": "/openapi/v3/" + gv + "?hash=" + hash}
		}
		writeJSON(w, map[string]any{"paths": paths})
	default:
		doc := openapiV3[strings.TrimPrefix(p, "/openapi/v3/")]
		if doc == nil || !strings.HasPrefix(p, "/openapi/v3/") {
			writeStatus(w, notFound(p))
			return
		}
		s.writeOpenAPI(w, r, doc, "application/json")
	}
}

func (s *Server) writeOpenAPI(w http.ResponseWriter, r *http.Request, doc *openapiDoc, typ string) {
	data, hash, err := doc.load()
	if err != nil {
		writeStatus(w, apierrors.NewInternalError(fmt.Errorf("openapi document %s: %w", doc.name, err)))
		return
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Etag", `"`+hash+`"`)
	if r.URL.Query().Get("hash") == hash {
		w.Header().Set("Cache-Control", "public, immutable")
	}
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(data)
}
