package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

const (
	maxFiles    = 10_000
	defaultMode = 0o644
)

// handleFile reads (GET) or writes (PUT) one file by absolute path.
func handleFile(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Query().Get("path")
	if !filepath.IsAbs(path) || strings.IndexByte(path, 0) >= 0 {
		writeError(w, http.StatusBadRequest, "bad_path", "path must be an absolute path")
		return
	}
	switch r.Method {
	case http.MethodGet:
		readOne(w, r, path)
	case http.MethodPut:
		writeOne(w, r, path)
	default:
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "GET or PUT /file")
	}
}

// readOne answers a regular file's bytes, up to max_bytes (default and most: 64 MiB).
func readOne(w http.ResponseWriter, r *http.Request, path string) {
	maxBytes := int64(maxBodyBytes)
	if text := r.URL.Query().Get("max_bytes"); text != "" {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n < 0 || n > maxBodyBytes {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("max_bytes must be from 0 to %d", maxBodyBytes))
			return
		}
		maxBytes = n
	}
	// O_NONBLOCK: opening a FIFO must not hang the request until a writer comes; it is
	// refused below as not a regular file, and reads of a regular file ignore the flag.
	file, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if os.IsNotExist(err) {
		writeError(w, http.StatusNotFound, "file_not_found", path+" does not exist")
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "unreadable", err.Error())
		return
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil || !info.Mode().IsRegular() {
		writeError(w, http.StatusBadRequest, "not_a_file", path+" is not a regular file")
		return
	}
	if info.Size() > maxBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "file_too_large", fmt.Sprintf("%s is %d bytes, more than %d", path, info.Size(), maxBytes))
		return
	}
	// Read one byte past the cap: a file that grew since Stat is caught too.
	data, err := io.ReadAll(io.LimitReader(file, maxBytes+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, "unreadable", err.Error())
		return
	}
	if int64(len(data)) > maxBytes {
		writeError(w, http.StatusRequestEntityTooLarge, "file_too_large", fmt.Sprintf("%s is larger than %d bytes", path, maxBytes))
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}

func parseMode(text string) (os.FileMode, error) {
	if text == "" {
		return defaultMode, nil
	}
	n, err := strconv.ParseUint(text, 8, 32)
	if err != nil || n > 0o7777 {
		return 0, fmt.Errorf("mode must be octal permission bits, not %q", text)
	}
	return os.FileMode(n), nil
}

// permissions turns the bits 0o7777 of a mode into Go's FileMode (setuid, setgid and sticky
// are separate flags there, not bits 0o7000).
func permissions(bits uint32) os.FileMode {
	mode := os.FileMode(bits & 0o777)
	if bits&0o4000 != 0 {
		mode |= os.ModeSetuid
	}
	if bits&0o2000 != 0 {
		mode |= os.ModeSetgid
	}
	if bits&0o1000 != 0 {
		mode |= os.ModeSticky
	}
	return mode
}

// writeOne writes the request body to path (mode default 0644, owner root or `user`).
func writeOne(w http.ResponseWriter, r *http.Request, path string) {
	mode, err := parseMode(r.URL.Query().Get("mode"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
		return
	}
	var owner *account
	if spec := r.URL.Query().Get("user"); spec != "" {
		if owner, err = lookupUser(spec); err != nil {
			writeError(w, http.StatusBadRequest, "bad_user", err.Error())
			return
		}
	}
	if err := writeAtomically(path, r.Body, permissions(uint32(mode)), owner); err != nil {
		if body, ok := err.(*bodyError); ok {
			body.write(w)
		} else {
			writeError(w, http.StatusBadRequest, "write_failed", err.Error())
		}
		return
	}
	// 200 with a body, not 204: workerd's client mishandled the connection after a 204 (the next request's body arrived cut short).
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// writeAtomically streams data into a temporary file beside path, then renames it over
// path: a reader sees the old file or the new one, never half of it (and an existing link
// at path is replaced, not followed). Missing parents are made root's, 0755 (umask 022).
func writeAtomically(path string, data io.Reader, mode os.FileMode, owner *account) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".edgegym-write-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name) // a no-op once renamed
	if _, err := io.Copy(tmp, data); err != nil {
		tmp.Close()
		if _, isFile := err.(*os.PathError); isFile {
			return err
		}
		return asBodyError(err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if owner != nil {
		if err := os.Chown(name, int(owner.uid), int(owner.gid)); err != nil {
			return err
		}
	}
	// After chown, which clears setuid and setgid bits.
	if err := os.Chmod(name, mode); err != nil {
		return err
	}
	return os.Rename(name, path)
}

type filesRequest struct {
	Files []struct {
		Path    string  `json:"path"`
		Mode    *uint32 `json:"mode"`
		DataB64 string  `json:"data_b64"`
	} `json:"files"`
}

// handleFiles writes a tree of files under one directory (a task's tests, a solution): all
// paths are checked and all data decoded before anything is written, so a bad one writes
// nothing.
func handleFiles(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "POST /files")
		return
	}
	dir := r.URL.Query().Get("dir")
	if !filepath.IsAbs(dir) || strings.IndexByte(dir, 0) >= 0 {
		writeError(w, http.StatusBadRequest, "bad_path", "dir must be an absolute path")
		return
	}
	var q filesRequest
	if err := decodeStrict(r, &q); err != nil {
		err.write(w)
		return
	}
	if len(q.Files) > maxFiles {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("more than %d files", maxFiles))
		return
	}
	// The checks need the directory's real path; making it first writes no file yet.
	if err := os.MkdirAll(dir, 0o755); err != nil {
		writeError(w, http.StatusBadRequest, "write_failed", err.Error())
		return
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		writeError(w, http.StatusBadRequest, "write_failed", err.Error())
		return
	}
	type planned struct {
		target string
		mode   os.FileMode
		data   []byte
	}
	plan := make([]planned, 0, len(q.Files))
	for _, f := range q.Files {
		target, why := inside(root, f.Path)
		if why != "" {
			writeError(w, http.StatusBadRequest, "bad_path", why)
			return
		}
		bits := uint32(defaultMode)
		if f.Mode != nil {
			bits = *f.Mode
		}
		if bits > 0o7777 {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("%s: mode %o is not permission bits", f.Path, bits))
			return
		}
		data, err := base64.StdEncoding.DecodeString(f.DataB64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", f.Path+": data_b64 is not base64")
			return
		}
		plan = append(plan, planned{target: target, mode: permissions(bits), data: data})
	}
	for _, p := range plan {
		if err := writeAtomically(p.target, bytes.NewReader(p.data), p.mode, nil); err != nil {
			writeError(w, http.StatusBadRequest, "write_failed", err.Error())
			return
		}
	}
	// 200 with a body, not 204: workerd's client mishandled the connection after a 204 (the next request's body arrived cut short).
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}

// inside is root joined with a relative path that may not leave it, neither by `..` nor
// through a symlink that already exists on the way.
func inside(root, rel string) (string, string) {
	if rel == "" || filepath.IsAbs(rel) || strings.IndexByte(rel, 0) >= 0 {
		return "", fmt.Sprintf("%q must be a relative path", rel)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			return "", fmt.Sprintf("%q leaves the directory", rel)
		}
	}
	target := filepath.Join(root, rel)
	if target == root {
		return "", fmt.Sprintf("%q names the directory itself, not a file in it", rel)
	}
	// The deepest existing directory on the way, resolved, must still be under root; what
	// does not exist yet is made by the write, under it.
	probe := filepath.Dir(target)
	for {
		if _, err := os.Lstat(probe); err == nil {
			break
		}
		probe = filepath.Dir(probe)
	}
	resolved, err := filepath.EvalSymlinks(probe)
	prefix := strings.TrimSuffix(root, "/") + "/"
	if err != nil || (resolved != root && !strings.HasPrefix(resolved, prefix)) {
		return "", fmt.Sprintf("%q leaves the directory through a link", rel)
	}
	return target, ""
}
