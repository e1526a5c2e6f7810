//go:build !tensorrt

package main

// tensorrtTag: the tests run with -tags tensorrt, and so does the binary TestMain builds.
const tensorrtTag = false
