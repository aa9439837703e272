// libyaml's event parser, from the system's libyaml (Debian's libyaml-dev, Homebrew's libyaml):
// Composition's YAMLBounds reads a config's event stream with it before Yams builds anything.
#include <yaml.h>
