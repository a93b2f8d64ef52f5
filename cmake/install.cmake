# `cmake --install build/release --prefix P`: the package an outside backend builds against
# (cmake/TransformerReproConfig.cmake.in): libraries, their headers under
# include/transformer_repro (included as "core/backend.h", as in this tree), the golden tensors
# and the package config. ctest `installed_package` installs into a scratch prefix and builds
# examples/out_of_tree_backend against it.
include(CMakePackageConfigHelpers)

set(TR_INSTALL_HEADERS ${CMAKE_INSTALL_INCLUDEDIR}/transformer_repro)
set(TR_INSTALL_GOLDEN_DIR ${CMAKE_INSTALL_DATADIR}/transformer_repro/golden)
set(TR_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/TransformerRepro)

set(tr_installed trepro_core trepro_reference trepro_cpu trepro_cuda_host trepro_registry trepro_tolerances
    trepro_testing trepro_op_test_bodies)
if(TARGET trepro_cuda)
  list(APPEND tr_installed trepro_cuda)
endif()
foreach(target IN LISTS tr_installed)
  # TransformerRepro::core for trepro_core.
  string(REPLACE "trepro_" "" exported ${target})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${exported})
endforeach()
install(TARGETS ${tr_installed} EXPORT TransformerReproTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        OBJECTS DESTINATION ${CMAKE_INSTALL_LIBDIR}/transformer_repro_objects)
install(EXPORT TransformerReproTargets NAMESPACE TransformerRepro:: DESTINATION ${TR_INSTALL_CMAKE_DIR})

foreach(folder IN ITEMS core reference registry optimized/cpu optimized/cuda conformance/support)
  get_filename_component(parent ${folder} DIRECTORY)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${folder} DESTINATION ${TR_INSTALL_HEADERS}/${parent}
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/golden/MANIFEST.json DESTINATION ${TR_INSTALL_GOLDEN_DIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/golden/data DESTINATION ${TR_INSTALL_GOLDEN_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/TransformerReproConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/TransformerReproConfig.cmake
                              INSTALL_DESTINATION ${TR_INSTALL_CMAKE_DIR}
                              PATH_VARS TR_INSTALL_GOLDEN_DIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/TransformerReproConfigVersion.cmake
                                 VERSION 0.1.0 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/TransformerReproConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/TransformerReproConfigVersion.cmake
        DESTINATION ${TR_INSTALL_CMAKE_DIR})
