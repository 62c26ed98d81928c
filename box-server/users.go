package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// account is who a command runs as, resolved as `docker exec -u` does.
type account struct {
	name     string // "" for a uid that /etc/passwd does not list
	uid, gid uint32
	home     string
	groups   []uint32 // supplementary groups, the primary one first
}

// lookupUser resolves "name", "uid", "name:group" or "uid:gid" from the container's own
// /etc/passwd and /etc/group. The binary is static (CGO off, no NSS), and these files are
// what the container's image says anyway: the task's Dockerfile made its users there.
func lookupUser(spec string) (*account, error) {
	userPart, groupPart := spec, ""
	if i := strings.IndexByte(spec, ':'); i >= 0 {
		userPart, groupPart = spec[:i], spec[i+1:]
	}
	if userPart == "" {
		return nil, fmt.Errorf("user %q names no user", spec)
	}
	passwd := readColonFile("/etc/passwd", 7)
	// A name wins over a uid, as in runc: a user called "1000" is that user, not uid 1000.
	row := findRow(passwd, 0, userPart)
	if row == nil {
		row = findRow(passwd, 2, userPart)
	}
	var acct *account
	if row != nil {
		uid, err1 := strconv.ParseUint(row[2], 10, 32)
		gid, err2 := strconv.ParseUint(row[3], 10, 32)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("the /etc/passwd entry of %q is not valid", userPart)
		}
		acct = &account{name: row[0], uid: uint32(uid), gid: uint32(gid), home: row[5]}
	} else {
		uid, err := strconv.ParseUint(userPart, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("no user %q in the container's /etc/passwd", userPart)
		}
		// A numeric uid needs no entry, as with docker: gid 0 unless one is named, HOME "/".
		acct = &account{uid: uint32(uid), home: "/"}
	}
	groups := readColonFile("/etc/group", 4)
	if groupPart != "" {
		if row := findRow(groups, 0, groupPart); row != nil {
			gid, err := strconv.ParseUint(row[2], 10, 32)
			if err != nil {
				return nil, fmt.Errorf("the /etc/group entry of %q is not valid", groupPart)
			}
			acct.gid = uint32(gid)
		} else if gid, err := strconv.ParseUint(groupPart, 10, 32); err == nil {
			acct.gid = uint32(gid)
		} else {
			return nil, fmt.Errorf("no group %q in the container's /etc/group", groupPart)
		}
	}
	acct.groups = []uint32{acct.gid}
	if acct.name != "" {
		for _, g := range groups {
			gid, err := strconv.ParseUint(g[2], 10, 32)
			if err != nil || uint32(gid) == acct.gid {
				continue
			}
			for _, member := range strings.Split(g[3], ",") {
				if strings.TrimSpace(member) == acct.name {
					acct.groups = append(acct.groups, uint32(gid))
					break
				}
			}
		}
	}
	return acct, nil
}

func findRow(rows [][]string, column int, value string) []string {
	for _, row := range rows {
		if row[column] == value {
			return row
		}
	}
	return nil
}

// readColonFile reads /etc/passwd-style rows with at least `fields` fields (others skipped).
func readColonFile(path string, fields int) [][]string {
	file, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer file.Close()
	var rows [][]string
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		line := scanner.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if row := strings.Split(line, ":"); len(row) >= fields {
			rows = append(rows, row)
		}
	}
	return rows
}
