// Package buildflags is the one description of a build's settings as a user writes them: the
// build command's flags (with trtexec's spellings), bound onto builder.Options. The command line
// parses them; a matrix file's build_flags go through the same flag set; and the HTTP API and MCP
// take the same names as JSON keys (Options), described by one JSON Schema (Schema), so a setting
// is named, checked and explained the same way everywhere.
package buildflags
