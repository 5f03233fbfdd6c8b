using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Diagnostics.Metrics;
using System.Threading.Tasks;
using Falconet.Diagnostics;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>RFC rules a server on the internet needs beyond the parser's own: chunk extensions, trailers, CONNECT; and how refusals are counted.</summary>
public class StrictnessTests : ServerTests
{
    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("1;\r\n")]
    [InlineData("1;a b\r\n")]
    [InlineData("1;a[b]\r\n")]
    [InlineData("1;a=\"unterminated\r\n")]
    public Task Chunk_extension_outside_the_RFC_9112_grammar_is_answered_400(string sizeLine)
        => AssertBodyRejectedAsync($"POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n{sizeLine}x\r\n0\r\n\r\n",
            RequestRejectionReason.InvalidChunkExtension);

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("Content-Length: 1")]
    [InlineData("Transfer-Encoding: chunked")]
    [InlineData("Host: elsewhere.example")]
    [InlineData("connection: close")]
    [InlineData("Upgrade: h2c")]
    public Task A_trailer_field_that_framing_or_routing_depends_on_is_answered_400(string trailer)
        => AssertBodyRejectedAsync($"POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n{trailer}\r\n\r\n",
            RequestRejectionReason.ForbiddenTrailerField);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Other_trailer_fields_are_kept_apart_from_the_headers_and_readable_once_the_body_is_read()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            HttpRequest request = context.Request;
            string before = $"{request.TrailersAvailable} {request.Trailers.Count}";
            byte[] buffer = new byte[64];
            while (await request.BodyReader.ReadAsync(buffer) > 0)
            {
            }

            RequestHeaders trailers = request.Trailers;
            context.Response.Write(System.Text.Encoding.ASCII.GetBytes(
                $"{before} | {request.TrailersAvailable} {trailers.Count} [{trailers["Vary"]}] [{trailers.ContentType}] [{trailers["X-Checksum"]}]" +
                $" | [{request.Headers.ContentType}] {request.Headers.ContainsKey("Vary")} {request.Headers.ContainsKey("X-Checksum")}"));
        });
        using RawClient client = host.Connect();

        // RFC 9110 section 6.5.1: Vary and Content-Type must not be merged into the headers; they do not make the request invalid.
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
            "3\r\nabc\r\n0\r\nVary: *\r\nContent-Type: text/plain\r\nX-Checksum: 1\r\n\r\n" +
            "GET / HTTP/1.1\r\nHost: test\r\n\r\n");

        RawResponse first = await client.ReadResponseAsync();
        first.StatusCode.ShouldBe(200);
        first.BodyText.ShouldBe("False 0 | True 3 [*] [text/plain] [1] | [application/json] False False");

        // The next request of the connection starts with no trailers, and has them at once: it has no body.
        (await client.ReadResponseAsync()).BodyText.ShouldBe("True 0 | True 0 [] [] [] | [] False False");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_trailer_section_is_bounded_by_the_header_limits()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            byte[] buffer = new byte[64];
            while (await context.Request.BodyReader.ReadAsync(buffer) > 0)
            {
            }
        }, options => options.Limits.MaxRequestHeaderCount = 4);
        using RawClient client = host.Connect();
        var trailers = new System.Text.StringBuilder();
        for (int i = 0; i < 5; i++)
        {
            trailers.Append($"X-Trailer-{i}: {i}\r\n");
        }

        await client.SendAsync($"POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n{trailers}\r\n");

        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(RequestRejections.GetStatusCode(RequestRejectionReason.TooManyHeaders));
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Other_trailer_fields_are_accepted_and_valid_extensions_ignored()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            byte[] buffer = new byte[64];
            int total = 0;
            int read;
            while ((read = await context.Request.BodyReader.ReadAsync(buffer)) > 0)
            {
                total += read;
            }

            context.Response.Write(System.Text.Encoding.ASCII.GetBytes(total.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        });
        using RawClient client = host.Connect();
        await client.SendAsync("POST / HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n3 ; name = \"v \\\" a\" ;flag\r\nabc\r\n0\r\nX-Checksum: 1\r\n\r\n");

        RawResponse response = await client.ReadResponseAsync();
        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("3");
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")]
    [InlineData("CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\n\r\n\u0016\u0003\u0001")]
    public Task CONNECT_is_answered_501_by_a_server_that_does_not_tunnel(string request)
        => AssertRejectedAsync(request, RequestRejectionReason.ConnectNotSupported);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task CONNECT_reaches_an_application_that_opts_in()
    {
        string? target = null;
        await using TestServer host = await StartServerAsync(
            context =>
            {
                target = context.Request.Host;
                return default;
            },
            options => options.AllowConnect = true);
        using RawClient client = host.Connect();
        await client.SendAsync("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");

        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        target.ShouldBe("example.com:443");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_refused_request_is_counted_with_its_reason()
    {
        var counted = new ConcurrentQueue<string?>();
        using var listener = new MeterListener();
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == ServerMetrics.MeterName && instrument.Name == ServerMetrics.RejectedRequestsName)
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((instrument, value, tags, state) =>
        {
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == ServerMetrics.ReasonTag)
                {
                    counted.Enqueue(tag.Value as string);
                }
            }
        });
        listener.Start();

        await AssertRejectedAsync("GET / HTTP/1.1\r\nHost: test\r\nHost: again\r\n\r\n", RequestRejectionReason.MultipleHost);

        // Other tests may refuse requests at the same time; this one's reason is there.
        counted.ShouldContain("multiple_host");
    }
}

public sealed class StrictnessTestsOnLibuv : StrictnessTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

public sealed class StrictnessTestsOnIoUring : StrictnessTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
