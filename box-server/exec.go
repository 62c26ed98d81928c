package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const (
	maxArgv        = 4096
	maxTimeoutMs   = 7_200_000
	maxOutputLimit = 64 << 20
	maxEnvEntries  = 4096
	// How long the reply waits for the output pipe to close once the command has exited: a
	// daemon it left behind may hold the pipe forever, and must not hold the reply.
	pipeGraceAfterExit = 100 * time.Millisecond
)

type execRequest struct {
	Argv           []string          `json:"argv"`
	TimeoutMs      int64             `json:"timeout_ms"`
	MaxOutputBytes int64             `json:"max_output_bytes"`
	User           string            `json:"user,omitempty"`
	Workdir        string            `json:"workdir,omitempty"`
	Env            map[string]string `json:"env,omitempty"`
	StdinB64       *string           `json:"stdin_b64,omitempty"`
}

type execReply struct {
	ExitCode    *int   `json:"exit_code"`
	OutputB64   string `json:"output_b64"`
	OutputBytes int64  `json:"output_bytes"`
	Truncated   bool   `json:"truncated"`
	TimedOut    bool   `json:"timed_out"`
	OOMKilled   bool   `json:"oom_killed"`
	DurationMs  int64  `json:"duration_ms"`
}

func (q *execRequest) validate() string {
	switch {
	case len(q.Argv) == 0 || q.Argv[0] == "":
		return "argv must name a program"
	case len(q.Argv) > maxArgv:
		return fmt.Sprintf("argv has more than %d entries", maxArgv)
	case q.TimeoutMs < 1 || q.TimeoutMs > maxTimeoutMs:
		return fmt.Sprintf("timeout_ms must be from 1 to %d", maxTimeoutMs)
	case q.MaxOutputBytes < 0 || q.MaxOutputBytes > maxOutputLimit:
		return fmt.Sprintf("max_output_bytes must be from 0 to %d", maxOutputLimit)
	case len(q.Env) > maxEnvEntries:
		return fmt.Sprintf("env has more than %d entries", maxEnvEntries)
	case q.Workdir != "" && !filepath.IsAbs(q.Workdir):
		return "workdir must be an absolute path"
	case strings.IndexByte(q.Workdir, 0) >= 0:
		return "workdir may not hold NUL"
	}
	for _, a := range q.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return "argv entries may not hold NUL"
		}
	}
	for k, v := range q.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.IndexByte(v, 0) >= 0 {
			return fmt.Sprintf("env name %q or its value is not valid", k)
		}
	}
	return ""
}

func handleExec(w http.ResponseWriter, r *http.Request, children *children) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "POST /exec")
		return
	}
	var q execRequest
	if err := decodeStrict(r, &q); err != nil {
		err.write(w)
		return
	}
	if why := q.validate(); why != "" {
		writeError(w, http.StatusBadRequest, "bad_request", why)
		return
	}
	var stdin []byte
	if q.StdinB64 != nil {
		data, err := base64.StdEncoding.DecodeString(*q.StdinB64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", "stdin_b64 is not base64")
			return
		}
		stdin = data
	}
	var who *account
	if q.User != "" {
		var err error
		if who, err = lookupUser(q.User); err != nil {
			writeError(w, http.StatusBadRequest, "bad_user", err.Error())
			return
		}
	}
	reply, err := runCommand(&q, who, stdin, children)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "exec_failed", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, reply)
}

// cappedBuffer keeps the first `limit` bytes written and counts all of them.
type cappedBuffer struct {
	limit int64
	total int64
	buf   bytes.Buffer
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.limit - int64(c.buf.Len()); room > 0 {
		if int64(len(p)) <= room {
			c.buf.Write(p)
		} else {
			c.buf.Write(p[:room])
		}
	}
	c.total += int64(len(p))
	return len(p), nil
}

func (c *cappedBuffer) reply(started time.Time) *execReply {
	return &execReply{
		OutputB64:   base64.StdEncoding.EncodeToString(c.buf.Bytes()),
		OutputBytes: c.total,
		Truncated:   c.total > int64(c.buf.Len()),
		DurationMs:  time.Since(started).Milliseconds(),
	}
}

// runtimeAnswer is what the runtime answers instead of the program when it cannot start it,
// as docker exec does: 127 when it is not found, 126 when it cannot be run (or the workdir
// is missing), with the reason on the output stream.
func runtimeAnswer(exitCode int, text string, started time.Time, limit int64) *execReply {
	out := &cappedBuffer{limit: limit}
	out.Write([]byte("edgegym-box-server: " + text + "\n"))
	reply := out.reply(started)
	reply.ExitCode = &exitCode
	return reply
}

// runCommand runs one command to its end or its time limit. Its error is the server's own
// failure (no pipe), never the command's.
func runCommand(q *execRequest, who *account, stdin []byte, children *children) (*execReply, error) {
	started := time.Now()
	env := childEnv(os.Environ(), who, q.Env)
	dir := q.Workdir
	if dir != "" {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			return runtimeAnswer(126, fmt.Sprintf("workdir %s: no such directory", dir), started, q.MaxOutputBytes), nil
		}
	}
	program, code, err := lookPath(q.Argv[0], envValue(env, "PATH"))
	if err != nil {
		return runtimeAnswer(code, fmt.Sprintf("exec %q: %v", q.Argv[0], err), started, q.MaxOutputBytes), nil
	}

	// One pipe for stdout and stderr: the bytes arrive in the order the command wrote them.
	outRead, outWrite, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer outRead.Close()
	cmd := &exec.Cmd{Path: program, Args: q.Argv, Env: env, Dir: dir, Stdout: outWrite, Stderr: outWrite}
	// Stdin is a pipe of our own, not an io.Reader: os/exec's Wait would wait for its copying
	// goroutine, which a command that never reads (and a grandchild holding the pipe) blocks
	// forever. Without stdin_b64, os/exec gives /dev/null: empty, at its end at once.
	var inRead, inWrite *os.File
	if stdin != nil {
		if inRead, inWrite, err = os.Pipe(); err != nil {
			outWrite.Close()
			return nil, err
		}
		cmd.Stdin = inRead
	}
	// Its own session: on a time limit every process of it is found by its session id.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if who != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: who.uid, Gid: who.gid, Groups: who.groups}
	}
	oomBefore := oomKillCount()
	err = children.start(cmd)
	outWrite.Close()
	if inRead != nil {
		inRead.Close()
	}
	if err != nil {
		if inWrite != nil {
			inWrite.Close()
		}
		code := 126
		if os.IsNotExist(err) {
			code = 127
		}
		return runtimeAnswer(code, fmt.Sprintf("exec %q: %v", q.Argv[0], err), started, q.MaxOutputBytes), nil
	}
	pid := cmd.Process.Pid
	if inWrite != nil {
		// Written, then closed; a command that exits without reading gets EPIPE here, harmless.
		go func() {
			inWrite.Write(stdin)
			inWrite.Close()
		}()
	}

	out := &cappedBuffer{limit: q.MaxOutputBytes}
	copied := make(chan struct{})
	go func() {
		io.Copy(out, outRead)
		close(copied)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timedOut := false
	timer := time.NewTimer(time.Duration(q.TimeoutMs) * time.Millisecond)
	select {
	case <-exited:
		timer.Stop()
	case <-timer.C:
		select {
		case <-exited: // it ended as the timer fired: not a timeout, and its pid may be reused
		default:
			timedOut = true
			killSession(pid)
			<-exited
		}
	}
	children.done(pid)
	if inWrite != nil {
		inWrite.Close() // unblocks a write to a command that exited without reading
	}
	select {
	case <-copied:
	case <-time.After(pipeGraceAfterExit):
		// A process left behind still holds the pipe; what it wrote so far is kept.
		outRead.Close()
		<-copied
	}

	reply := out.reply(started)
	reply.TimedOut = timedOut
	reply.OOMKilled = oomRose(oomBefore, oomKillCount())
	if !timedOut {
		code := exitCodeOf(cmd)
		reply.ExitCode = &code
	}
	return reply, nil
}

// exitCodeOf reports a signal death as 128 + the signal, as a shell and docker do.
func exitCodeOf(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return 126
	}
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		return 128 + int(status.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// childEnv is the server's environment (the image's ENV: the token and port are already
// gone from it), then HOME and USER of the requested user as docker exec sets HOME, then the
// request's own variables on top.
func childEnv(base []string, who *account, extra map[string]string) []string {
	set := map[string]string{}
	if who != nil {
		set["HOME"] = who.home
		if who.name != "" {
			set["USER"] = who.name
		}
	}
	for k, v := range extra {
		set[k] = v
	}
	env := make([]string, 0, len(base)+len(set))
	for _, kv := range base {
		name := kv
		if i := strings.IndexByte(kv, '='); i >= 0 {
			name = kv[:i]
		}
		if _, replaced := set[name]; !replaced {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

func envValue(env []string, name string) string {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return kv[len(name)+1:]
		}
	}
	return ""
}

// lookPath finds a program on the child's PATH (not the server's), as docker exec does; the
// int is the exit code to answer when it fails (127 not found, 126 not executable).
func lookPath(name, path string) (string, int, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			if os.IsNotExist(err) {
				return "", 127, fmt.Errorf("no such file or directory")
			}
			return "", 126, err
		}
		return name, 0, nil
	}
	if path == "" {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		candidate := filepath.Join(dir, name)
		if executable(candidate) == nil {
			return candidate, 0, nil
		}
	}
	return "", 127, fmt.Errorf("executable file not found in $PATH")
}

func executable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if info.IsDir() || info.Mode()&0o111 == 0 {
		return fmt.Errorf("permission denied")
	}
	return nil
}
