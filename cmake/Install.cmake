# `cmake --install BUILD --prefix P` installs (docs/development.md, "Installing and embedding"):
# - the libraries webhooks::core, ::signing, ::storage, ::http, ::idempotency, ::idempotency_http
#   (common/; the umbrella webhooks::common links them all), webhooks::outbox, webhooks::receiver and
#   webhooks::publisher (lib/), their
#   public headers (include/webhooks/), with a CMake package (lib/cmake/webhooks/) so that an
#   application calls find_package(webhooks) and links webhooks::receiver (or ::publisher);
# - the schema files (share/webhooks/schema/), for reading: the libraries carry them compiled in;
# - every executable that was built (bin/): webhooks-publisherd, webhooks, merchant-receiver,
#   orders-api, payout-partner, webhooks-demo. Each executable's CMakeLists.txt installs it.
# webhooks::app (app/) is the executables' shared code, linked into them: not installed.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS webhooks_core webhooks_signing webhooks_storage webhooks_http webhooks_idempotency
        webhooks_idempotency_http
        webhooks_common webhooks_console webhooks_outbox webhooks_publisher webhooks_receiver
        EXPORT webhooksTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(lib common/core common/signing common/storage common/http common/idempotency common/idempotency_http
    console outbox publisher receiver)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${lib}/include)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/${lib}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schema/ DESTINATION ${CMAKE_INSTALL_DATADIR}/webhooks/schema)
install(EXPORT webhooksTargets NAMESPACE webhooks::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/webhooks)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/webhooksConfig.cmake.in
        ${PROJECT_BINARY_DIR}/webhooksConfig.cmake
        INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/webhooks)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/webhooksConfigVersion.cmake
        COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/webhooksConfig.cmake ${PROJECT_BINARY_DIR}/webhooksConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/webhooks)
