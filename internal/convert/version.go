package convert

// Version identifies what the converter writes. Engine cache keys (internal/buildkey) include
// it whenever a build converts the model, so raise it with every change that can change the
// converted model's bytes; engines built from the old output are then rebuilt, never reused.
const Version = 1
