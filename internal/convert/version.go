package convert

// Version identifies what the converter writes. Engine cache keys (internal/buildkey) include
// it whenever a build converts the model, so raise it with every change that can change the
// converted model's bytes; engines built from the old output are then rebuilt, never reused.
//
// 2: the compact graph writes the same graphs with other bytes (unchanged nodes copied as they
// were read, fields in their original order).
const Version = 2
