// Command registry is the test suite's OCI registry WITH the referrers API (OCI distribution 1.1):
// go-containerregistry's in-memory pkg/registry with WithReferrersSupport(true), listening on a
// loopback address. Debian's docker-registry 2.8 (test/registry/registry.ts) is the one without it.
//
// pkg/registry (v0.22.1) serves GET /v2/<name>/referrers/<digest>, but three things the distribution
// spec asks of a registry with that API are missing, and a client relies on each:
//
//   - the `OCI-Subject` response header on a manifest PUT that carries a subject: it is how a client
//     learns the registry has the API (without it, oras, cosign and aicr fall back to the tag scheme);
//   - a listed descriptor's artifactType is the manifest's `artifactType` (pkg/registry gives the
//     config's media type, `application/vnd.oci.empty.v1+json` for every artifact built the OCI 1.1 way);
//   - the `artifactType` query filter, with the `OCI-Filters-Applied` header.
//
// This wrapper adds those three and lists the referrers in digest order (pkg/registry ranges over a
// map), so a test sees the same bytes every run. Everything else is pkg/registry's own behaviour.
//
//	registry [-addr 127.0.0.1:0] [-v]
//
// It prints `listening on http://<host:port>` on stdout once it accepts connections.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/registry"
)

// maxManifest bounds a manifest body read by the wrapper (the distribution spec's common 4 MiB).
const maxManifest = 4 << 20

type descriptor struct {
	MediaType    string            `json:"mediaType"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

type index struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Manifests     []descriptor `json:"manifests"`
}

type referrer struct {
	ArtifactType string `json:"artifactType"`
	Config       struct {
		MediaType string `json:"mediaType"`
	} `json:"config"`
	Subject *struct {
		Digest string `json:"digest"`
	} `json:"subject"`
}

// route splits /v2/<name>/<kind>/<ref> into its name, kind ("manifests", "referrers", …) and ref.
func route(path string) (name, kind, ref string, ok bool) {
	elems := strings.Split(strings.TrimPrefix(path, "/v2/"), "/")
	if !strings.HasPrefix(path, "/v2/") || len(elems) < 3 {
		return "", "", "", false
	}
	n := len(elems)
	return strings.Join(elems[:n-2], "/"), elems[n-2], elems[n-1], true
}

// withSubjectHeader sets OCI-Subject on a successful manifest PUT whose body names a subject.
func withSubjectHeader(inner http.Handler, w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxManifest+1))
	if err != nil || len(body) > maxManifest {
		http.Error(w, "manifest unreadable or larger than 4 MiB", http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	var m referrer
	if json.Unmarshal(body, &m) == nil && m.Subject != nil && m.Subject.Digest != "" {
		rec := httptest.NewRecorder()
		inner.ServeHTTP(rec, r)
		if rec.Code == http.StatusCreated {
			rec.Header().Set("OCI-Subject", m.Subject.Digest)
		}
		copyResponse(w, rec)
		return
	}
	inner.ServeHTTP(w, r)
}

// referrers answers the referrers API from pkg/registry's list, each entry's artifactType read from
// its manifest, filtered by ?artifactType=, in digest order.
func referrers(inner http.Handler, w http.ResponseWriter, r *http.Request, name string) {
	rec := httptest.NewRecorder()
	inner.ServeHTTP(rec, r)
	if rec.Code != http.StatusOK {
		copyResponse(w, rec)
		return
	}
	var idx index
	if err := json.Unmarshal(rec.Body.Bytes(), &idx); err != nil {
		http.Error(w, "referrers list unreadable: "+err.Error(), http.StatusInternalServerError)
		return
	}
	filter := r.URL.Query().Get("artifactType")
	kept := []descriptor{}
	for _, d := range idx.Manifests {
		get := httptest.NewRequest(http.MethodGet, "/v2/"+name+"/manifests/"+d.Digest, nil)
		mrec := httptest.NewRecorder()
		inner.ServeHTTP(mrec, get)
		var m referrer
		if mrec.Code == http.StatusOK && json.Unmarshal(mrec.Body.Bytes(), &m) == nil && m.ArtifactType != "" {
			d.ArtifactType = m.ArtifactType
		}
		if filter == "" || d.ArtifactType == filter {
			kept = append(kept, d)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Digest < kept[j].Digest })
	idx.Manifests = kept
	out, _ := json.Marshal(idx)
	w.Header().Set("Content-Type", "application/vnd.oci.image.index.v1+json")
	w.Header().Set("Content-Length", fmt.Sprint(len(out)))
	if filter != "" {
		w.Header().Set("OCI-Filters-Applied", "artifactType")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(out)
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

func handler(verbose bool) http.Handler {
	logger := log.New(io.Discard, "", 0)
	if verbose {
		logger = log.New(os.Stderr, "", log.LstdFlags)
	}
	inner := registry.New(registry.WithReferrersSupport(true), registry.Logger(logger))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, kind, _, ok := route(r.URL.Path)
		switch {
		case ok && kind == "manifests" && r.Method == http.MethodPut:
			withSubjectHeader(inner, w, r)
		case ok && kind == "referrers" && r.Method == http.MethodGet:
			referrers(inner, w, r, name)
		default:
			inner.ServeHTTP(w, r)
		}
	})
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback address to listen on (port 0: a free one)")
	verbose := flag.Bool("v", false, "log every request to stderr")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "::1" && host != "localhost") {
		fmt.Fprintf(os.Stderr, "registry: -addr %q: expected a loopback host:port, e.g. 127.0.0.1:0\n", *addr)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "registry: listen on %s: %v\n", *addr, err)
		os.Exit(1)
	}
	fmt.Printf("listening on http://%s\n", ln.Addr())
	if err := http.Serve(ln, handler(*verbose)); err != nil {
		fmt.Fprintf(os.Stderr, "registry: %v\n", err)
		os.Exit(1)
	}
}
