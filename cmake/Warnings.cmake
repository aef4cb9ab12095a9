# webhooks_set_warnings(target): -Wall -Wextra -Wpedantic, errors when WEBHOOKS_WERROR (CI=true).
add_library(webhooks_warnings INTERFACE)
target_compile_options(webhooks_warnings INTERFACE -Wall -Wextra -Wpedantic)
if(WEBHOOKS_WERROR)
  target_compile_options(webhooks_warnings INTERFACE -Werror)
endif()
if(WEBHOOKS_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

function(webhooks_set_warnings target)
  target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:webhooks_warnings>)
endfunction()
