package agentsmd

import (
	"io/fs"
	"syscall"
	"time"
)

// identity is what changes when the file is written or replaced.
func identity(fi fs.FileInfo) fileID {
	id := fileID{size: fi.Size(), mtime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.ino, id.dev = st.Ino, uint64(st.Dev)
		id.ctime = time.Unix(st.Ctim.Sec, st.Ctim.Nsec)
	}
	return id
}
