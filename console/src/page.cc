#include "webhooks/console/page.h"

#include <httplib.h>

#include "webhooks/console/html.h"

namespace webhooks::console {
namespace {

std::string head(const std::string& title, const std::string& csrf_token) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  if (!csrf_token.empty()) {
    out += "<meta name=\"csrf-token\" content=\"" + escape_html(csrf_token) + "\">\n";
  }
  out += "<title>" + escape_html(title) + "</title>\n";
  out += "<link rel=\"stylesheet\" href=\"/console/assets/console.css\">\n";
  out += "<script src=\"/console/assets/console.js\" defer></script>\n</head>\n";
  return out;
}

std::string header(const Page& page) {
  std::string out =
      "<header>\n<span class=\"brand\">" + escape_html(page.console_title) + "</span>\n<nav>\n";
  for (const NavLink& link : page.nav) {
    out += "<a id=\"" + escape_html(link.id) + "\" href=\"" + escape_html(link.href) + "\"";
    if (link.id == page.active_nav) out += " aria-current=\"page\"";
    out += ">" + escape_html(link.label) + "</a>\n";
  }
  out += "</nav>\n";
  if (!page.csrf_token.empty()) {
    out +=
        "<form id=\"sign-out-form\" method=\"post\" action=\"/console/logout\">"
        "<input type=\"hidden\" name=\"csrf\" value=\"" +
        escape_html(page.csrf_token) +
        "\"><button id=\"sign-out\" type=\"submit\">Sign out</button></form>\n";
  }
  return out + "</header>\n";
}

}  // namespace

std::string render_page(const Page& page) {
  std::string out = head(page.title + " · " + page.console_title, page.csrf_token);
  out += "<body>\n" + header(page) + "<main>\n<h1>" + escape_html(page.title) + "</h1>\n";
  out += page.body;
  out += "</main>\n</body>\n</html>\n";
  return out;
}

std::string render_login(const std::string& console_title, const std::string& error) {
  Page page;
  page.console_title = console_title;
  page.title = "Sign in";
  std::string& body = page.body;
  if (!error.empty())
    body += "<p id=\"login-error\" class=\"error\">" + escape_html(error) + "</p>\n";
  body +=
      "<form id=\"login-form\" method=\"post\" action=\"/console/login\">\n"
      "<label for=\"token\">Token</label>\n"
      "<input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"current-password\" "
      "required autofocus>\n"
      "<button id=\"sign-in\" type=\"submit\">Sign in</button>\n</form>\n";
  return render_page(page);
}

void send_html(httplib::Response& res, int status, std::string html) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
                 "form-action 'self'; base-uri 'none'");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "same-origin");  // no-referrer would send Origin: null
  res.body = std::move(html);
  res.set_header("Content-Type", "text/html; charset=utf-8");
}

void redirect(httplib::Response& res, const std::string& location) {
  res.status = 303;
  res.set_header("Location", location);
  res.set_header("Cache-Control", "no-store");
  res.body.clear();
}

}  // namespace webhooks::console
