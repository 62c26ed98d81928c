package main

import (
	"crypto/subtle"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"syscall"
)

// The token arrives in EDGEGYM_BOX_TOKEN (the only way Cloudflare Containers passes a secret
// to a container's start). os.Unsetenv alone would leave it in /proc/1/environ, which is the
// environment the kernel copied at exec and which Go never rewrites; so the server hands the
// token to a fresh image of itself through a pipe and re-executes (same pid) with an
// environment that never held it. The fd's number travels in tokenFdVar.
const (
	tokenVar   = "EDGEGYM_BOX_TOKEN"
	tokenFdVar = "EDGEGYM_BOX_TOKEN_FD"
)

// takeToken returns the box's token; on the first start it does not return but re-executes.
func takeToken() (string, error) {
	if fdText, ok := os.LookupEnv(tokenFdVar); ok {
		os.Unsetenv(tokenFdVar)
		fd, err := strconv.Atoi(fdText)
		if err != nil || fd < 3 {
			return "", fmt.Errorf("%s is not a file descriptor", tokenFdVar)
		}
		file := os.NewFile(uintptr(fd), "token")
		data, err := io.ReadAll(io.LimitReader(file, 64<<10))
		file.Close()
		if err != nil {
			return "", fmt.Errorf("reading the token: %v", err)
		}
		return checkToken(string(data))
	}
	token, err := checkToken(os.Getenv(tokenVar))
	if err != nil {
		return "", err
	}
	os.Unsetenv(tokenVar)
	if err := reexecWithout(token); err != nil {
		// No /proc or no exec: the token stays readable in /proc/1/environ, to root only.
		fmt.Fprintf(os.Stderr, "edgegym-box-server: re-exec without the token failed (%v); going on\n", err)
	}
	return token, nil
}

func checkToken(token string) (string, error) {
	if len(token) < minTokenLen {
		return "", fmt.Errorf("%s must be set to at least %d characters", tokenVar, minTokenLen)
	}
	return token, nil
}

// reexecWithout writes the token into a pipe (a token is far below the pipe's buffer) whose
// read end survives exec, then replaces this process by the same binary.
func reexecWithout(token string) error {
	var fds [2]int
	// syscall.Pipe, not os.Pipe: the read end must not be close-on-exec.
	if err := syscall.Pipe(fds[:]); err != nil {
		return err
	}
	if _, err := syscall.Write(fds[1], []byte(token)); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return err
	}
	syscall.Close(fds[1])
	env := append(os.Environ(), tokenFdVar+"="+strconv.Itoa(fds[0]))
	err := syscall.Exec("/proc/self/exe", os.Args, env)
	syscall.Close(fds[0])
	return err
}

// authorized refuses every request without `Authorization: Bearer <token>`, compared in
// constant time (ConstantTimeCompare still leaks the length, which is not secret).
func authorized(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			writeError(w, http.StatusUnauthorized, "unauthorized", "this box answers only its owner: a valid bearer token is required")
			return
		}
		next.ServeHTTP(w, r)
	})
}
