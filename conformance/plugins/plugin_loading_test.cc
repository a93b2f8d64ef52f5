// Loading backend plugins (registry/plugin_backend.h): what a good one gives the registry, and the
// message of each bad input, naming the file and what was expected.
#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "conformance/support/exception_message.h"
#include "registry/plugin_backend.h"
#include "registry/registry.h"

namespace trepro::testing {
namespace {

using ::testing::HasSubstr;

TEST(PluginLoading, TheExamplePluginIsABackendOfItsFloat32OpsOnly) {
  std::shared_ptr<const Plugin> plugin = Plugin::load(TR_EXAMPLE_PLUGIN);
  ASSERT_EQ(plugin->dtypes(), std::vector<DType>{DType::f32});
  std::unique_ptr<Backend> backend = make_plugin_backend(plugin, DType::f32);
  EXPECT_EQ(backend->name(), "example-c-f32");
  EXPECT_EQ(backend->dtype(), DType::f32);
  for (OpDirection op : every_op_direction()) {
    const bool own = op == OpDirection{Op::norm, Direction::forward} || op == OpDirection{Op::log_softmax, Direction::forward};
    EXPECT_EQ(backend->provides(op), own) << describe(op);
  }
}

TEST(PluginLoading, TheRegistryListsThePluginsOfTheEnvironmentBesideItsOwnBackends) {
  ASSERT_EQ(setenv("TREPRO_BACKEND_PLUGINS", TR_EXAMPLE_PLUGIN ":" TR_EXAMPLE_PLUGIN_BROKEN, 1), 0);
  std::vector<std::string> names;
  for (const BackendInfo& info : available_backends()) names.push_back(info.name);
  unsetenv("TREPRO_BACKEND_PLUGINS");
  EXPECT_THAT(names, ::testing::IsSupersetOf({"reference-f32", "reference-f64", "example-c-f32", "example-c-broken-f32"}));
}

TEST(PluginLoading, AMissingFileIsNamedWithWhatWasExpected) {
  const std::string message = message_of<std::invalid_argument>([] { Plugin::load("/nonexistent/libplugin.so"); });
  EXPECT_THAT(message, HasSubstr("backend plugin /nonexistent/libplugin.so: cannot be loaded ("));
  EXPECT_THAT(message, HasSubstr("expected a shared library implementing core/plugin_abi.h"));
}

TEST(PluginLoading, AnotherAbiVersionIsRefusedNamingBothVersions) {
  EXPECT_EQ(message_of<std::invalid_argument>([] { Plugin::load(TR_BAD_ABI_PLUGIN); }),
            std::string("backend plugin ") + TR_BAD_ABI_PLUGIN +
                ": has ABI version 999; this trepro reads version 1 (core/plugin_abi.h): rebuild it against that header");
}

TEST(PluginLoading, ALibraryWithoutTheEntrySymbolIsRefused) {
  EXPECT_EQ(message_of<std::invalid_argument>([] { Plugin::load(TR_NO_ENTRY_PLUGIN); }),
            std::string("backend plugin ") + TR_NO_ENTRY_PLUGIN +
                ": has no symbol trepro_backend_plugin; expected a function returning const trepro_plugin* "
                "(core/plugin_abi.h)");
}

TEST(PluginLoading, ATableWithoutAnyFunctionIsRefused) {
  EXPECT_EQ(message_of<std::invalid_argument>([] { Plugin::load(TR_NO_FUNCTION_PLUGIN); }),
            std::string("backend plugin ") + TR_NO_FUNCTION_PLUGIN + ": provides no function in f32 or f64; expected at least one");
}

TEST(PluginLoading, ABadEntryInTheEnvironmentStopsTheRegistryNamingTheFile) {
  ASSERT_EQ(setenv("TREPRO_BACKEND_PLUGINS", TR_BAD_ABI_PLUGIN, 1), 0);
  const std::string message = message_of<std::invalid_argument>([] { available_backends(); });
  unsetenv("TREPRO_BACKEND_PLUGINS");
  EXPECT_THAT(message, HasSubstr(std::string("backend plugin ") + TR_BAD_ABI_PLUGIN + ": has ABI version 999"));
}

}  // namespace
}  // namespace trepro::testing
