using System;
using System.Text;
using Falconet.Http.Http1;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>The precomputed HTTP/1.1 status lines.</summary>
public sealed class StatusLineTests
{
    [Theory]
    [InlineData(200, "HTTP/1.1 200 OK")]
    [InlineData(404, "HTTP/1.1 404 Not Found")]
    [InlineData(413, "HTTP/1.1 413 Content Too Large")]
    [InlineData(431, "HTTP/1.1 431 Request Header Fields Too Large")]
    [InlineData(505, "HTTP/1.1 505 HTTP Version Not Supported")]
    [InlineData(299, "HTTP/1.1 299 ")]
    public void Get_returns_the_precomputed_status_line(int code, string expected)
        => Encoding.ASCII.GetString(HttpStatusLines.Get(code)).ShouldBe(expected);

    [Theory]
    [InlineData(99)]
    [InlineData(600)]
    public void Get_throws_when_the_code_is_outside_100_to_599(int code)
        => Should.Throw<ArgumentOutOfRangeException>(() => HttpStatusLines.Get(code).Length);

    [Fact]
    public void Get_returns_the_same_bytes_every_time()
        => (HttpStatusLines.Get(200) == HttpStatusLines.Get(200)).ShouldBeTrue();
}
