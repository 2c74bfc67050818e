#include "http/url.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "http/message.h"

namespace kfpbench::http {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ParseUrl, HttpWithPortAndBasePath) {
  auto url = ParseUrl("http://127.0.0.1:8888/pipeline/");
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_EQ(url->scheme, "http");
  EXPECT_EQ(url->host, "127.0.0.1");
  EXPECT_EQ(url->port, 8888);
  EXPECT_EQ(url->base_path, "/pipeline");
  EXPECT_EQ(url->ToString(), "http://127.0.0.1:8888/pipeline");
}

TEST(ParseUrl, DefaultPortsAndHostNames) {
  auto a = ParseUrl("http://kfp.example.com");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->port, 80);
  EXPECT_EQ(a->base_path, "");
  auto b = ParseUrl("HTTPS://kfp.example.com/");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->scheme, "https");
  EXPECT_EQ(b->port, 443);
  EXPECT_EQ(b->base_path, "");
  auto c = ParseUrl("http://localhost:/x");  // empty port: the default
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->port, 80);
}

TEST(ParseUrl, BracketedIpv6) {
  auto url = ParseUrl("http://[::1]:9000/a/b");
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 9000);
  EXPECT_EQ(url->base_path, "/a/b");
  EXPECT_EQ(url->ToString(), "http://[::1]:9000/a/b");
  auto no_port = ParseUrl("https://[fe80::1%25eth0]");
  ASSERT_TRUE(no_port.ok()) << no_port.error().message;
  EXPECT_EQ(no_port->port, 443);
}

TEST(ParseUrl, RejectsBadInput) {
  struct Case {
    const char* text;
    const char* why;
  };
  for (const Case& c : {Case{"ftp://host", "unsupported scheme"}, Case{"host:80", "expected http"},
                        Case{"http://", "empty host"}, Case{"http://:80", "empty host"},
                        Case{"http://h:0", "bad port"}, Case{"http://h:65536", "bad port"},
                        Case{"http://h:8x", "bad port"}, Case{"http://h:123456", "bad port"},
                        Case{"http://[::1", "unterminated"}, Case{"http://[::1]x", "after ']'"},
                        Case{"http://[zz]", "IPv6"}, Case{"http://a b", "bad character"},
                        Case{"http://h/p?q=1", "query"}}) {
    auto url = ParseUrl(c.text);
    ASSERT_FALSE(url.ok()) << c.text;
    EXPECT_THAT(url.error().message, HasSubstr(c.why)) << url.error().message;
  }
}

TEST(ParseUrl, DoesNotEchoUserInfo) {
  auto url = ParseUrl("http://user:s3cret@host/");
  ASSERT_FALSE(url.ok());
  EXPECT_THAT(url.error().message, Not(HasSubstr("s3cret")));
}

TEST(Percent, EncodeKeepsUnreserved) {
  EXPECT_EQ(PercentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(PercentEncode("a b/c?d=e&f+\xff"), "a%20b%2Fc%3Fd%3De%26f%2B%FF");
  EXPECT_EQ(PercentEncode(""), "");
}

TEST(Percent, DecodeRoundTripsAndPlus) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  auto back = PercentDecode(PercentEncode(all));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, all);
  EXPECT_EQ(*PercentDecode("a+b%2b"), "a b+");
  EXPECT_EQ(*PercentDecode("a+b", /*plus_as_space=*/false), "a+b");
  EXPECT_EQ(*PercentDecode("%e2%82%AC"), "\xe2\x82\xac");
}

TEST(Percent, DecodeRejectsMalformedEscapes) {
  for (const char* s : {"%", "%4", "abc%", "%zz", "%4g", "x%g0"}) {
    EXPECT_FALSE(PercentDecode(s).ok()) << s;
  }
}

TEST(Query, ParsesRepeatsAndEmptyValues) {
  auto q = ParseQuery("a=1&b=x%20y&a=2&flag&&c=&d=e=f");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->count("a"), 2u);
  auto range = q->equal_range("a");
  EXPECT_EQ(range.first->second, "1");
  EXPECT_EQ(std::next(range.first)->second, "2");
  EXPECT_EQ(q->find("b")->second, "x y");
  EXPECT_EQ(q->find("flag")->second, "");
  EXPECT_EQ(q->find("c")->second, "");
  EXPECT_EQ(q->find("d")->second, "e=f");
  EXPECT_EQ(q->size(), 6u);
  EXPECT_TRUE(ParseQuery("")->empty());
  EXPECT_FALSE(ParseQuery("a=%zz").ok());
  EXPECT_FALSE(ParseQuery("%=1").ok());
}

TEST(Query, BuildRoundTrips) {
  std::multimap<std::string, std::string> params{
      {"filter", R"({"predicates":[{"key":"name","op":"EQUALS"}]})"},
      {"page_size", "5"},
      {"x y", "a&b=c"}};
  std::string built = BuildQuery(params);
  EXPECT_THAT(built, Not(HasSubstr(" ")));
  auto back = ParseQuery(built);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, params);
  EXPECT_EQ(BuildQuery({}), "");
}

TEST(Message, HeadersAreCaseInsensitive) {
  Headers h;
  h.Add("Content-Type", "a");
  h.Add("X-Multi", "1");
  h.Add("x-multi", "2");
  EXPECT_EQ(h.Get("content-type"), "a");
  EXPECT_TRUE(h.Has("X-MULTI"));
  EXPECT_EQ(h.Get("x-Multi"), "1");
  h.Set("X-MULTI", "3");
  EXPECT_EQ(h.Get("x-multi"), "3");
  EXPECT_EQ(h.entries().size(), 2u);
  EXPECT_EQ(h.Get("missing"), "");
  EXPECT_FALSE(h.Has("missing"));
}

TEST(Message, RequestQueryAndResponseHelpers) {
  Request r;
  r.query = {{"a", "1"}, {"a", "2"}};
  EXPECT_EQ(r.Query("a"), "1");
  EXPECT_TRUE(r.HasQuery("a"));
  EXPECT_FALSE(r.HasQuery("b"));
  EXPECT_EQ(r.Query("b"), "");
  Response j = Response::Json(201, "{}");
  EXPECT_EQ(j.status, 201);
  EXPECT_EQ(j.headers.Get("content-type"), "application/json");
  Response t = Response::Text(200, "hi");
  EXPECT_EQ(t.headers.Get("Content-Type"), "text/plain");
  EXPECT_EQ(MethodName(Method::kDelete), "DELETE");
}

}  // namespace
}  // namespace kfpbench::http
