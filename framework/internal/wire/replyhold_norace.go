//go:build !race

package wire

const holdReplies = false
