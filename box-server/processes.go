package main

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// children tracks the commands this server started, so that the orphan reaper never takes
// the exit status an exec is waiting for. The server is the container's PID 1 (or a
// subreaper, becomeSubreaper): every process a command leaves behind is re-parented to it,
// and would stay a zombie unless something reaps it.
type children struct {
	mu     sync.Mutex
	active map[int]bool
}

func newChildren() *children { return &children{active: map[int]bool{}} }

// start runs cmd.Start and records the pid under one lock, so the reaper cannot see the
// child between its fork and its registration.
func (c *children) start(cmd *exec.Cmd) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	c.active[cmd.Process.Pid] = true
	return nil
}

func (c *children) done(pid int) {
	c.mu.Lock()
	delete(c.active, pid)
	c.mu.Unlock()
}

// killAll kills the session of every running command (on shutdown).
func (c *children) killAll() {
	c.mu.Lock()
	pids := make([]int, 0, len(c.active))
	for pid := range c.active {
		pids = append(pids, pid)
	}
	c.mu.Unlock()
	for _, pid := range pids {
		killSession(pid)
	}
}

// reapOrphans waits for zombies whose parent is this server and which no exec owns: on
// every SIGCHLD, and every few seconds in case signals were coalesced.
func (c *children) reapOrphans() {
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGCHLD)
	ticker := time.NewTicker(5 * time.Second)
	self := os.Getpid()
	for {
		select {
		case <-signals:
		case <-ticker.C:
		}
		c.mu.Lock()
		for _, p := range listProcesses() {
			if p.state == 'Z' && p.ppid == self && !c.active[p.pid] {
				var status syscall.WaitStatus
				syscall.Wait4(p.pid, &status, syscall.WNOHANG, nil)
			}
		}
		c.mu.Unlock()
	}
}

// becomeSubreaper makes orphans of commands come back to this server when it is not PID 1
// (an init such as tini in front of it), so the reaper and the session walk still see them.
func becomeSubreaper() {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

type procStat struct {
	pid, ppid, pgrp, session int
	state                    byte
}

// listProcesses reads /proc/*/stat. The command name may hold spaces and ")", so the fields
// are read after its last ")".
func listProcesses() []procStat {
	entries, _ := filepath.Glob("/proc/[0-9]*/stat")
	out := make([]procStat, 0, len(entries))
	for _, path := range entries {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // gone since the glob
		}
		text := string(data)
		end := strings.LastIndexByte(text, ')')
		space := strings.IndexByte(text, ' ')
		if end < 0 || space < 0 || end+2 >= len(text) {
			continue
		}
		fields := strings.Fields(text[end+2:])
		if len(fields) < 4 {
			continue
		}
		pid, _ := strconv.Atoi(text[:space])
		ppid, _ := strconv.Atoi(fields[1])
		pgrp, _ := strconv.Atoi(fields[2])
		session, _ := strconv.Atoi(fields[3])
		out = append(out, procStat{pid: pid, ppid: ppid, pgrp: pgrp, session: session, state: fields[0][0]})
	}
	return out
}

// killSession SIGKILLs a command's process group and every process whose session or group
// is its pid (a job-control shell gives background jobs their own group in the session), in
// three rounds: a forking loop may add processes while one round runs. A process that made
// its own session (setsid, a daemon) escapes, as it does `docker exec`'s end too.
func killSession(pid int) {
	for round := 0; round < 3; round++ {
		syscall.Kill(-pid, syscall.SIGKILL)
		for _, p := range listProcesses() {
			if p.pid != pid && (p.session == pid || p.pgrp == pid) && p.state != 'Z' {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// oomKillCount is the container's memory cgroup `oom_kill` count (cgroup v1
// memory.oom_control, v2 memory.events), or -1 where the kernel offers none.
func oomKillCount() int64 {
	for _, path := range []string{"/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"} {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 2 && fields[0] == "oom_kill" {
				if n, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
					return n
				}
			}
		}
	}
	return -1
}

func oomRose(before, after int64) bool { return before >= 0 && after > before }
