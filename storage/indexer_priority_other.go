//go:build !linux

package storage

import "log/slog"

// lowerIndexerPriority does nothing outside Linux, where a nice value is the whole process's.
func lowerIndexerPriority(*slog.Logger) {}
