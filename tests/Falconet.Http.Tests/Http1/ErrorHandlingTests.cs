using System;
using System.Threading.Tasks;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Shouldly;

namespace Falconet.Http.Tests.Http1;

public class ErrorHandlingTests : ServerTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Exception_before_the_response_started_is_answered_500_and_the_connection_stays()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            if (context.Request.PathBytes.SequenceEqual("/fail"u8))
            {
                context.Response.Write("partial body that must not be sent"u8);
                throw new InvalidOperationException("boom");
            }

            context.Response.Write("fine"u8);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET /fail HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse failed = await client.ReadResponseAsync();
        failed.StatusLine.ShouldBe("HTTP/1.1 500 Internal Server Error");
        failed.Header("Content-Length").ShouldBe("0");
        failed.Header("Connection").ShouldBeNull();

        await client.SendAsync("GET /ok HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("fine");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Asynchronous_exception_is_answered_500()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            await Task.Yield();
            throw new InvalidOperationException("late boom");
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(500);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Exception_after_the_response_started_aborts_the_connection()
    {
        await using TestServer host = await StartServerAsync(async context =>
        {
            context.Response.Write("started"u8);
            await context.Response.FlushAsync();
            throw new InvalidOperationException("too late");
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        await Should.ThrowAsync<Exception>(async () => await client.ReadResponseAsync());
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Content_length_mismatch_is_answered_500()
    {
        await using TestServer host = await StartServerAsync(context =>
        {
            context.Response.ContentLength = 10;
            context.Response.Write("short"u8);
            return default;
        });
        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).StatusCode.ShouldBe(500);
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class ErrorHandlingTestsOnLibuv : ErrorHandlingTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class ErrorHandlingTestsOnIoUring : ErrorHandlingTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
