package chaos

import (
	"fmt"
	"os"
	"syscall"
)

// fillTo allocates a file on the file system of dir so that leave bytes
// stay free.
func fillTo(dir, file string, leave int64) error {
	os.Remove(file)
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return err
	}
	avail := int64(st.Bavail) * st.Bsize
	size := avail - leave
	if size <= 0 {
		return nil
	}
	fd, err := os.Create(file)
	if err != nil {
		return err
	}
	defer fd.Close()
	if err := syscall.Fallocate(int(fd.Fd()), 0, 0, size); err != nil {
		return fmt.Errorf("fallocate %d bytes: %w", size, err)
	}
	return nil
}
