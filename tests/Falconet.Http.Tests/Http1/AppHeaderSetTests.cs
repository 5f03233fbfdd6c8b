using System;
using System.Collections.Generic;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Microsoft.Extensions.Primitives;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

/// <summary>
/// A server of an app's own header set (app.headers.json, generated as <see cref="HeaderSet"/>) over a real socket: the
/// app's headers are parsed as known headers, read and written through typed properties, and the rest works as ever.
/// </summary>
public class AppHeaderSetTests : ServerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Mixed_case_app_headers_are_matched_as_known_headers_and_read_through_typed_properties()
    {
        var seen = new List<string>();
        await using TestServer host = await StartServerAsync<HeaderSet>(context =>
        {
            RequestHeaders<HeaderSet> headers = context.Request.Headers;
            foreach (KeyValuePair<string, StringValues> pair in headers)
            {
                seen.Add(pair.Key + "=" + pair.Value);
            }

            context.Response.Write(System.Text.Encoding.ASCII.GetBytes(headers.XTenantId + "/" + headers.XRequestId));
            return default;
        });
        using RawClient client = host.Connect();

        await client.SendAsync("GET / HTTP/1.1\r\nHost: a\r\nx-TENANT-id: blue\r\nX-REQUEST-ID: r-1\r\nX-Other: o\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();

        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("blue/r-1");

        // A known header is enumerated by bit under its schema spelling; an unknown one last, under the spelling it was sent with.
        seen.ShouldBe(new[] { "Host=a", "X-Tenant-Id=blue", "X-Request-Id=r-1", "X-Other=o" });
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task App_header_values_are_reused_across_requests_like_those_of_built_in_headers()
    {
        var tenants = new List<string>();
        var requestIds = new List<string>();
        await using TestServer host = await StartServerAsync<HeaderSet>(context =>
        {
            tenants.Add(context.Request.Headers.XTenantId.ToString());
            requestIds.Add(context.Request.Headers.XRequestId.ToString());
            return default;
        });
        using RawClient client = host.Connect();

        for (int i = 0; i < 2; i++)
        {
            await client.SendAsync("GET / HTTP/1.1\r\nHost: a\r\nX-Tenant-Id: green\r\nX-Request-Id: same-id\r\n\r\n");
            (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        }

        // A known value is the table's one shared string; another value is made once and reused while it repeats.
        int tenant = HeaderSet.IndexOfRequestHeader("x-tenant-id"u8);
        HeaderSet.RequestHeaderTable.GetName(tenant).ShouldBe("X-Tenant-Id");
        tenants[0].ShouldBeSameAs(Array.Find(HeaderSet.RequestHeaderTable.GetKnownValues(tenant), value => value == "green"));
        tenants[1].ShouldBeSameAs(tenants[0]);
        requestIds[0].ShouldBe("same-id");
        requestIds[1].ShouldBeSameAs(requestIds[0]);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task App_response_headers_are_written_with_their_schema_names()
    {
        await using TestServer host = await StartServerAsync<HeaderSet>(context =>
        {
            context.Response.Headers.XServedBy = "edge-1";
            context.Response.Headers["x-other"] = "o";
            context.Response.Write("ok"u8);
            return default;
        });
        using RawClient client = host.Connect();

        await client.SendAsync("GET / HTTP/1.1\r\nHost: a\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();

        response.Header("X-Served-By").ShouldBe("edge-1");
        response.Header("x-other").ShouldBe("o");
        response.BodyText.ShouldBe("ok");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_header_that_is_absent_reads_as_empty_by_name_and_by_property()
    {
        StringValues byName = "unset";
        StringValues byProperty = "unset";
        await using TestServer host = await StartServerAsync<HeaderSet>(context =>
        {
            byName = context.Request.Headers["X-Not-Sent"];
            byProperty = context.Request.Headers.XTenantId;
            return default;
        });
        using RawClient client = host.Connect();

        await client.SendAsync("GET / HTTP/1.1\r\nHost: a\r\n\r\n");

        (await client.ReadResponseAsync()).StatusCode.ShouldBe(200);
        byName.ShouldBe(StringValues.Empty);
        byProperty.ShouldBe(StringValues.Empty);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_framing_headers_of_the_default_schema_still_drive_the_request_and_response()
    {
        await using TestServer host = await StartServerAsync<HeaderSet>(async context =>
        {
            var body = new byte[16];
            int read = await context.Request.Body.ReadAsync(body);
            context.Response.Headers.XServedBy = context.Request.Headers.XTenantId;
            await context.Response.WriteAsync(body.AsMemory(0, read));
        });
        using RawClient client = host.Connect();

        await client.SendAsync("POST / HTTP/1.1\r\nHost: a\r\nX-Tenant-Id: blue\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello");
        RawResponse response = await client.ReadResponseAsync();

        response.StatusCode.ShouldBe(200);
        response.BodyText.ShouldBe("hello");
        response.Header("X-Served-By").ShouldBe("blue");
        response.Header("Connection").ShouldBe("close");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_invalid_content_length_is_still_answered_400_and_the_handler_never_runs()
    {
        bool called = false;
        await using TestServer host = await StartServerAsync<HeaderSet>(context =>
        {
            called = true;
            return default;
        });
        using RawClient client = host.Connect();

        await client.SendAsync("GET / HTTP/1.1\r\nHost: a\r\nX-Tenant-Id: blue\r\nContent-Length: 1x\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();

        response.StatusCode.ShouldBe(400);
        response.Header("Connection").ShouldBe("close");
        (await client.IsClosedByServerAsync()).ShouldBeTrue();
        called.ShouldBeFalse();
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class AppHeaderSetTestsOnLibuv : AppHeaderSetTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class AppHeaderSetTestsOnIoUring : AppHeaderSetTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
