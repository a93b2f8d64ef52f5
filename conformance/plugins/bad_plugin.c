/* Plugins that trepro must refuse, each with a message naming the file and what was expected
 * (plugin_loading_test.cc): BAD_PLUGIN_ABI declares ABI version 999; BAD_PLUGIN_NO_ENTRY exports
 * no trepro_backend_plugin; BAD_PLUGIN_NO_FUNCTION has a table with no function. */
#include "core/plugin_abi.h"

#if defined(BAD_PLUGIN_ABI)
static const trepro_plugin table = {999u, "bad-abi", "declares an ABI version that does not exist", {0}, {0}};
const trepro_plugin* trepro_backend_plugin(void) { return &table; }
#elif defined(BAD_PLUGIN_NO_FUNCTION)
static const trepro_plugin table = {TREPRO_PLUGIN_ABI_VERSION, "no-function", "computes nothing", {0}, {0}};
const trepro_plugin* trepro_backend_plugin(void) { return &table; }
#else
int not_the_entry(void) { return 0; }
#endif
