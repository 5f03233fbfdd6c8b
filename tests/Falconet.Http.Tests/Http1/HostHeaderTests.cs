using System;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>RFC 9112 section 3.2: Host is required on HTTP/1.1, appears once, and holds uri-host [":" port].</summary>
public class HostHeaderTests : ServerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Http11_request_without_Host_is_answered_400()
        => AssertRejectedAsync("GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", RequestRejectionReason.MissingHost);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Higher_minor_version_without_Host_is_answered_400_like_HTTP_1_1()
        => AssertRejectedAsync("GET / HTTP/1.4\r\n\r\n", RequestRejectionReason.MissingHost);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Absolute_form_target_without_Host_is_answered_400()
        => AssertRejectedAsync("GET http://example.com/ HTTP/1.1\r\n\r\n", RequestRejectionReason.MissingHost);

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("Host: a\r\nhost: b\r\n")]
    [InlineData("Host: a\r\nHost: a\r\n")]
    [InlineData("Host:\r\nHost:\r\n")]
    public Task Two_Host_lines_are_answered_400(string hostLines)
        => AssertRejectedAsync($"GET / HTTP/1.1\r\n{hostLines}\r\n", RequestRejectionReason.MultipleHost);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Two_Host_lines_are_answered_400_on_HTTP_1_0_too()
        => AssertRejectedAsync("GET / HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n", RequestRejectionReason.MultipleHost);

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("a, b")]
    [InlineData("a/b c")]
    [InlineData("a/b")]
    [InlineData("user@example.com")]
    [InlineData("example.com:80:80")]
    [InlineData("example.com:http")]
    [InlineData("example.com:123456")]
    [InlineData(":80")]
    [InlineData("[::1")]
    [InlineData("[not-an-address]")]
    [InlineData("exa%2")]
    [InlineData("caf\u00e9.example")]
    public Task Invalid_Host_value_is_answered_400(string value)
        => AssertRejectedAsync($"GET / HTTP/1.1\r\nHost: {value}\r\n\r\n", RequestRejectionReason.InvalidHost);

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("GET / HTTP/1.1\r\nHost:\r\n\r\n")]
    [InlineData("GET /a?b HTTP/1.1\r\nHost: \t \r\n\r\n")]
    [InlineData("OPTIONS * HTTP/1.1\r\nHost:\r\n\r\n")]
    [InlineData("GET / HTTP/1.3\r\nHost:\r\n\r\n")]
    public Task Empty_Host_with_a_target_that_takes_its_authority_from_Host_is_answered_400(string request)
        => AssertRejectedAsync(request, RequestRejectionReason.EmptyHost);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public Task Invalid_Host_value_is_answered_400_even_when_the_target_names_the_host()
        => AssertRejectedAsync("GET http://example.com/ HTTP/1.1\r\nHost: a b\r\n\r\n", RequestRejectionReason.InvalidHost);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_repeated_valid_Host_is_served_and_a_later_invalid_one_is_still_answered_400()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.Write("ok"u8);
            return default;
        });
        using RawClient client = host.Connect();

        // The collection hands back the same string for a repeated value, which is then not scanned again.
        await client.SendAsync("GET / HTTP/1.1\r\nHost: example.com\r\n\r\nGET / HTTP/1.1\r\nHost: example.com\r\n\r\nGET / HTTP/1.1\r\nHost: a b\r\n\r\n");

        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(400);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n", "example.com")]
    [InlineData("GET / HTTP/1.1\r\nHost: Example.COM:8080\r\n\r\n", "Example.COM:8080")]
    [InlineData("GET / HTTP/1.1\r\nHost: 127.0.0.1:80\r\n\r\n", "127.0.0.1:80")]
    [InlineData("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n", "[::1]:8080")]
    [InlineData("GET / HTTP/1.1\r\nHost: xn--caf-dma.example\r\n\r\n", "xn--caf-dma.example")]
    [InlineData("GET / HTTP/1.0\r\nHost: \r\n\r\n", "")]
    [InlineData("GET / HTTP/1.0\r\n\r\n", "")]
    [InlineData("OPTIONS * HTTP/1.1\r\nHost: example.com\r\n\r\n", "example.com")]

    // RFC 9112 section 3.2.2: the target's authority wins over the Host header, which must still be valid.
    [InlineData("GET http://target.example:81/p?q HTTP/1.1\r\nHost: other.example\r\n\r\n", "target.example:81")]
    [InlineData("GET https://target.example?q HTTP/1.1\r\nHost:\r\n\r\n", "target.example")]
    [InlineData("CONNECT proxy.example:443 HTTP/1.1\r\nHost: proxy.example:443\r\n\r\n", "proxy.example:443")]
    public async Task Valid_request_is_handled_with_the_host_it_names(string request, string expectedHost)
    {
        string? seen = null;
        await using TestServer host = await StartServerAsync(
            context =>
            {
                seen = context.Request.Host;
                return default;
            },
            options => options.AllowConnect = true);
        using RawClient client = host.Connect();
        await client.SendAsync(request);
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        seen.ShouldBe(expectedHost);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Host_of_an_absolute_form_target_is_made_once_while_it_repeats()
    {
        string? first = null;
        string? second = null;
        await using TestServer host = await StartServerAsync(context =>
        {
            if (first is null)
            {
                first = context.Request.Host;
            }
            else
            {
                second = context.Request.Host;
            }

            return default;
        });
        using RawClient client = host.Connect();
        for (int i = 0; i < 2; i++)
        {
            await client.SendAsync("GET http://target.example/a HTTP/1.1\r\nHost: target.example\r\n\r\n");
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        }

        second.ShouldBeSameAs(first);
    }

    [Theory]
    [InlineData("")]
    [InlineData("localhost")]
    [InlineData("localhost:")]
    [InlineData("localhost:0")]
    [InlineData("localhost:65535")]
    [InlineData("a-b.c_d~e")]
    [InlineData("!$&'()*+,;=")]
    [InlineData("ex%41mple.com")]
    [InlineData("192.0.2.1")]
    [InlineData("999.1.1.1")]
    [InlineData("[::]")]
    [InlineData("[::1]")]
    [InlineData("[1::]:80")]
    [InlineData("[::1]:")]
    [InlineData("[2001:db8::8a2e:370:7334]:443")]
    [InlineData("[2001:0db8:0000:0000:0000:ff00:0042:8329]")]
    [InlineData("[1:2:3:4:5:6:7::]")]
    [InlineData("[::ffff:192.0.2.128]")]
    [InlineData("[1:2:3:4:5:6:1.2.3.4]")]
    [InlineData("[v7.abc:def]")]
    [InlineData("[VF.x]:1")]
    public void Valid_host_values(string value)
    {
        UriAuthority.IsValidHostHeader(value).ShouldBeTrue();
        (value.Length == 0 || UriAuthority.IsHostAndPort<byte>(System.Text.Encoding.Latin1.GetBytes(value), requirePort: false)).ShouldBeTrue();
    }

    [Theory]
    [InlineData(" ")]
    [InlineData("a b")]
    [InlineData("a,b c")]
    [InlineData("a\tb")]
    [InlineData("a/b")]
    [InlineData("a?b")]
    [InlineData("a#b")]
    [InlineData("a@b")]
    [InlineData("a\"b")]
    [InlineData("a<b>")]
    [InlineData("a{b}")]
    [InlineData("a\\b")]
    [InlineData("a^b")]
    [InlineData("a|b")]
    [InlineData("a`b")]
    [InlineData("%")]
    [InlineData("a%4")]
    [InlineData("a%zz")]
    [InlineData(":")]
    [InlineData(":80")]
    [InlineData("a:b")]
    [InlineData("a:-1")]
    [InlineData("a:100000")]
    [InlineData("a:80:")]
    [InlineData("a]")]
    [InlineData("[")]
    [InlineData("[]")]
    [InlineData("[::1")]
    [InlineData("[::1]x")]
    [InlineData("[::1]]")]
    [InlineData("[:1]")]
    [InlineData("[1:]")]
    [InlineData("[1::2::3]")]
    [InlineData("[1:::2]")]
    [InlineData("[12345::]")]
    [InlineData("[g::1]")]
    [InlineData("[1:2:3:4:5:6:7:8:9]")]
    [InlineData("[1:2:3:4:5:6:7]")]
    [InlineData("[1:2:3:4:5:6:7:8::]")]
    [InlineData("[::1.2.3]")]
    [InlineData("[::1.2.3.4.5]")]
    [InlineData("[::1.2.3.256]")]
    [InlineData("[::01.2.3.4]")]
    [InlineData("[::1.2.3.4:5]")]
    [InlineData("[1:2:3:4:5:6:7:1.2.3.4]")]
    [InlineData("[v.x]")]
    [InlineData("[v1.]")]
    [InlineData("[vx.1]")]
    [InlineData("[v1.a/b]")]
    [InlineData("[fe80::1%25eth0]")]
    [InlineData("caf\u00e9")]
    [InlineData("\u0141odz")]
    public void Invalid_host_values(string value)
    {
        UriAuthority.IsValidHostHeader(value).ShouldBeFalse();
        if (value.AsSpan().IndexOfAnyInRange('\u0100', '\uffff') < 0)
        {
            UriAuthority.IsHostAndPort<byte>(System.Text.Encoding.Latin1.GetBytes(value), requirePort: false).ShouldBeFalse();
        }
    }

    [Theory]
    [InlineData("example.com:443", true)]
    [InlineData("[::1]:8443", true)]
    [InlineData("example.com", false)]
    [InlineData("example.com:", false)]
    [InlineData("[::1]", false)]
    public void Connect_target_needs_a_port(string value, bool valid)
        => UriAuthority.IsHostAndPort<byte>(System.Text.Encoding.Latin1.GetBytes(value), requirePort: true).ShouldBe(valid);
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class HostHeaderTestsOnLibuv : HostHeaderTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class HostHeaderTestsOnIoUring : HostHeaderTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
