// Package fscopy copies folder trees for the apply pipeline: the pristine
// module out of the read-only Go module cache, the pkg/ libraries and the
// overlay into a staging tree.
//
// Copies are always owner-writable (0644, or 0755 for executables) whatever
// the source mode, because module cache files are read-only and a staged tree
// must be patchable and removable. Only regular files and folders are copied;
// a symlink or device is refused rather than followed, so a tree's content is
// exactly what was hashed. It draws only on the standard library.
package fscopy
