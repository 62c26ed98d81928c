// The box server: the main process (ENTRYPOINT) of every container the Worker build starts
// on Cloudflare Containers (docs/worker.md). The Durable Object that owns an episode's box
// calls it to run commands and read or write files, as `docker exec` and the Engine's
// archive API do for the Node server's Docker provider.
//
// The agent runs in the same container and can reach this port on localhost, so every
// request must carry the box's token (token.go), which no command the server runs can read.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const (
	version      = "1"
	maxBodyBytes = 64 << 20
	minTokenLen  = 32
	// How long in-flight requests may finish after SIGTERM before their commands are killed:
	// Docker and Cloudflare Containers send SIGKILL some seconds after SIGTERM anyway.
	shutdownGrace = 3 * time.Second
)

func main() {
	log.SetFlags(0)
	log.SetOutput(os.Stderr)
	token, err := takeToken()
	if err != nil {
		fmt.Fprintf(os.Stderr, "edgegym-box-server: %v\n", err)
		os.Exit(2)
	}
	port := os.Getenv("EDGEGYM_BOX_PORT")
	if port == "" {
		port = "8080"
	}
	// Commands inherit the server's environment (the image's ENV), never its own settings.
	os.Unsetenv("EDGEGYM_BOX_PORT")
	// Files and directories the server makes are 0755/0644 whatever umask the runtime gave
	// PID 1, and commands start with Docker's default umask, as under `docker exec`.
	syscall.Umask(0o022)
	becomeSubreaper()

	children := newChildren()
	go children.reapOrphans()

	server := &http.Server{
		Addr: "0.0.0.0:" + port,
		// limited is outermost so that http.MaxBytesReader sees the real ResponseWriter (it
		// closes the connection after a too-large body).
		Handler:           limited(logged(authorized(token, routes(children)))),
		ReadHeaderTimeout: 30 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}

	stopped := make(chan struct{})
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-stop
		log.Printf("edgegym-box-server: %v: stopping", sig)
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		err := server.Shutdown(ctx)
		cancel()
		if err != nil {
			// Commands still running: kill them, then let their requests answer.
			children.killAll()
			ctx, cancel = context.WithTimeout(context.Background(), 2*time.Second)
			server.Shutdown(ctx)
			cancel()
		}
		close(stopped)
	}()

	log.Printf("edgegym-box-server %s listening on %s", version, server.Addr)
	if err := server.ListenAndServe(); err != http.ErrServerClosed {
		log.Printf("edgegym-box-server: %v", err)
		os.Exit(1)
	}
	<-stopped
	children.killAll()
	log.Printf("edgegym-box-server: stopped")
}

// routes maps the API's four paths; anything else is a JSON 404 (after the token check, so
// that nothing about the server is learnt without it).
func routes(children *children) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/health":
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "GET /health")
				return
			}
			writeJSON(w, http.StatusOK, map[string]interface{}{"ok": true, "version": version})
		case "/exec":
			handleExec(w, r, children)
		case "/file":
			handleFile(w, r)
		case "/files":
			handleFiles(w, r)
		default:
			writeError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.URL.Path)
		}
	})
}

// limited caps every request body at 64 MiB.
func limited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// statusRecorder remembers the status and error code of a reply for the request's log line.
type statusRecorder struct {
	http.ResponseWriter
	status int
	code   string
}

func (s *statusRecorder) WriteHeader(status int) {
	s.status = status
	s.ResponseWriter.WriteHeader(status)
}

// logged writes one line per request to stderr: method, path, status, the error code if any,
// milliseconds. Never the query (file paths are the caller's business), a header or a body.
func logged(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		code := ""
		if rec.code != "" {
			code = " " + rec.code
		}
		log.Printf("%s %s %d%s %dms", r.Method, r.URL.Path, rec.status, code, time.Since(start).Milliseconds())
	})
}
