using System;
using System.IO;
using System.Linq;
using System.Net;
using System.Net.Http;
using System.Net.Http.Json;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Threading;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Samples.AspNetCore;
using Falconet.Server;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;
using Shouldly;

namespace Falconet.AspNetCore.Tests;

/// <summary>ASP.NET Core applications on Falconet over real sockets, on the sockets transport and (derived class) on libuv.</summary>
public class AspNetCoreServerTests
{
    protected virtual TransportKind Transport => TransportKind.Sockets;

    private Task<AspNetTestApp> StartAsync(Action<WebApplication> map, Action<WebApplicationBuilder>? configure = null)
        => AspNetTestApp.StartAsync(Transport, map, configure);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Minimal_api_routes_answer_with_their_bodies_and_status_codes()
    {
        await using AspNetTestApp host = await StartAsync(app =>
        {
            app.MapGet("/hello/{name}", (string name) => $"Hello, {name}!");
            app.MapGet("/teapot", () => Results.StatusCode(418));
            app.MapDelete("/items/{id:int}", (int id) => Results.NoContent());
        });

        using (HttpResponseMessage hello = await host.Http.GetAsync("hello/w%C3%B6rld"))
        {
            hello.StatusCode.ShouldBe(HttpStatusCode.OK);
            (await hello.Content.ReadAsStringAsync()).ShouldBe("Hello, wörld!");
            hello.Headers.GetValues("Server").Single().ShouldBe("Falconet");
        }

        (await host.Http.GetAsync("teapot")).StatusCode.ShouldBe((HttpStatusCode)418);
        (await host.Http.GetAsync("missing")).StatusCode.ShouldBe(HttpStatusCode.NotFound);
        (await host.Http.PostAsync("hello/x", null)).StatusCode.ShouldBe(HttpStatusCode.MethodNotAllowed);
        (await host.Http.DeleteAsync("items/7")).StatusCode.ShouldBe(HttpStatusCode.NoContent);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Dot_segments_and_escapes_in_the_path_are_resolved_before_routing()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/files/{name}", (HttpContext context, string name) =>
            $"{context.Request.Path.Value}|{name}|{context.Request.QueryString}"));

        using RawClient client = host.Connect();
        await client.SendAsync("GET /static/../files/a%20b?x=%41 HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        response.BodyText.ShouldBe("/files/a b|a b|?x=%41");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Json_goes_in_and_out_through_the_framework_serializer()
    {
        await using AspNetTestApp host = await StartAsync(app =>
            app.MapPost("/echo", (Message message) => new Message(message.Text.ToUpperInvariant())));

        using HttpResponseMessage response = await host.Http.PostAsJsonAsync("echo", new Message("falconet"));
        response.StatusCode.ShouldBe(HttpStatusCode.OK);
        response.Content.Headers.ContentType!.MediaType.ShouldBe("application/json");
        (await response.Content.ReadFromJsonAsync<Message>())!.Text.ShouldBe("FALCONET");

        using var malformed = new StringContent("{\"message\":", System.Text.Encoding.UTF8, "application/json");
        (await host.Http.PostAsync("echo", malformed)).StatusCode.ShouldBe(HttpStatusCode.BadRequest);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Large_request_and_response_bodies_arrive_whole_by_hash_with_or_without_content_length(bool chunked)
    {
        byte[] upload = RandomNumberGenerator.GetBytes(3 * 1024 * 1024 + 17);
        await using AspNetTestApp host = await StartAsync(app =>
        {
            app.MapPost("/hash", async (HttpRequest request) =>
            {
                using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
                byte[] buffer = new byte[8191];
                int read;
                long total = 0;
                while ((read = await request.Body.ReadAsync(buffer)) > 0)
                {
                    hash.AppendData(buffer, 0, read);
                    total += read;
                }

                return $"{total} {Convert.ToHexString(hash.GetHashAndReset())}";
            });
            app.MapGet("/download/{length:int}", async (HttpResponse response, int length) =>
            {
                byte[] data = Pattern(length);
                for (int offset = 0; offset < length; offset += 10_000)
                {
                    await response.Body.WriteAsync(data.AsMemory(offset, Math.Min(10_000, length - offset)));
                }
            });
        });

        using HttpContent content = chunked ? new StreamContent(new MemoryStream(upload)) : new ByteArrayContent(upload);
        using HttpResponseMessage uploaded = await host.Http.PostAsync("hash", content);
        (await uploaded.Content.ReadAsStringAsync()).ShouldBe($"{upload.Length} {Convert.ToHexString(SHA256.HashData(upload))}");

        int length = chunked ? 1_500_001 : 20_000;
        using HttpResponseMessage downloaded = await host.Http.GetAsync($"download/{length}");
        byte[] body = await downloaded.Content.ReadAsByteArrayAsync();
        Convert.ToHexString(SHA256.HashData(body)).ShouldBe(Convert.ToHexString(SHA256.HashData(Pattern(length))));

        // A small body completes buffered and gets its length; a large one streams chunked.
        downloaded.Headers.TransferEncodingChunked.GetValueOrDefault().ShouldBe(chunked);
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData("Body")]
    [InlineData("BodyWriter")]
    public async Task Large_writes_from_one_reused_buffer_arrive_as_written(string writer)
    {
        const int Piece = 64 * 1024;
        const int Pieces = 24;
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/reused", async (HttpResponse response) =>
        {
            // Large writes go out from the endpoint's own buffer: each must be done with it before the next refill.
            byte[] buffer = new byte[Piece];
            for (int i = 0; i < Pieces; i++)
            {
                Array.Fill(buffer, (byte)(i + 1));
                if (writer == "Body")
                {
                    await response.Body.WriteAsync(buffer);
                }
                else
                {
                    await response.BodyWriter.WriteAsync(buffer);
                }
            }
        }));

        byte[] body = await host.Http.GetByteArrayAsync("reused");
        body.Length.ShouldBe(Piece * Pieces);
        for (int i = 0; i < Pieces; i++)
        {
            Array.TrueForAll(body.AsSpan(i * Piece, Piece).ToArray(), b => b == (byte)(i + 1)).ShouldBeTrue($"piece {i}");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task RequestAborted_fires_when_the_client_disconnects_while_the_endpoint_waits()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var aborted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/wait", async (CancellationToken requestAborted) =>
        {
            entered.TrySetResult();
            try
            {
                await Task.Delay(Timeout.Infinite, requestAborted);
            }
            catch (OperationCanceledException)
            {
                aborted.TrySetResult();
                throw;
            }
        }));

        using (RawClient client = host.Connect())
        {
            await client.SendAsync("GET /wait HTTP/1.1\r\nHost: test\r\n\r\n");
            await entered.Task.WaitAsync(TestTimeouts.Operation);
        }

        await aborted.Task.WaitAsync(TestTimeouts.Operation);

        // Giving up on an aborted request is not an application error.
        await WaitUntilAsync(() => host.Logs.Entries.Any(e => e.EventId == 506));
        host.Logs.Entries.ShouldNotContain(e => e.EventId == 500);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_exception_before_the_response_starts_gives_500_logged_and_the_connection_stays_usable()
    {
        await using AspNetTestApp host = await StartAsync(app =>
        {
            app.MapGet("/fail", (HttpContext context) =>
            {
                context.Response.Headers["X-Lost"] = "dropped";
                throw new InvalidOperationException("before start");
            });
            app.MapGet("/ok", () => "ok");
        });

        using RawClient client = host.Connect();
        await client.SendAsync("GET /fail HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse failed = await client.ReadResponseAsync();
        failed.StatusCode.ShouldBe(500);
        failed.Header("Content-Length").ShouldBe("0");
        failed.Header("X-Lost").ShouldBeNull();
        failed.Header("Connection").ShouldBeNull();

        await client.SendAsync("GET /ok HTTP/1.1\r\nHost: test\r\n\r\n");
        (await client.ReadResponseAsync()).BodyText.ShouldBe("ok");
        CapturingLoggerProvider.LogEntry logged = host.Logs.Entries.Single(e => e.EventId == 500);
        logged.Category.ShouldBe("Falconet.AspNetCore");
        logged.Level.ShouldBe(LogLevel.Error);
        logged.Exception!.Message.ShouldBe("before start");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_exception_after_the_response_started_ends_the_connection_and_is_logged()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/fail", async (HttpResponse response) =>
        {
            await response.WriteAsync("partial");
            await response.Body.FlushAsync();
            throw new InvalidOperationException("after start");
        }));

        using RawClient client = host.Connect();
        await client.SendAsync("GET /fail HTTP/1.1\r\nHost: test\r\n\r\n");

        // The head and the first chunk arrive, then the connection ends without the last chunk.
        await Should.ThrowAsync<Exception>(() => client.ReadResponseAsync());
        await WaitUntilAsync(() => host.Logs.Entries.Any(e => e.EventId == 501));
        host.Logs.Entries.Single(e => e.EventId == 500).Exception!.Message.ShouldBe("after start");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task OnStarting_runs_before_the_head_and_OnCompleted_after_the_client_has_the_response()
    {
        var clientHasResponse = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var completedRan = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", (HttpContext context) =>
        {
            context.Response.OnStarting(() =>
            {
                context.Response.Headers["X-Started"] = "first";
                return Task.CompletedTask;
            });
            context.Response.OnStarting(() =>
            {
                // Registered last, runs first.
                context.Response.Headers["X-Started"] = "second";
                return Task.CompletedTask;
            });
            context.Response.OnCompleted(async () =>
            {
                // Waits for the client: had the response not been sent before, this would never complete.
                await clientHasResponse.Task.WaitAsync(TestTimeouts.Operation);
                completedRan.TrySetResult();
            });
            return "body";
        }));

        using RawClient client = host.Connect();
        await client.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse response = await client.ReadResponseAsync();
        clientHasResponse.TrySetResult();
        response.Header("X-Started").ShouldBe("first");
        response.BodyText.ShouldBe("body");
        await completedRan.Task.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task An_OnStarting_callback_that_fails_gives_500_and_is_logged()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", (HttpContext context) =>
        {
            context.Response.OnStarting(() => throw new InvalidOperationException("callback"));
            context.Response.StatusCode = 204;
        }));

        (await host.Http.GetAsync("")).StatusCode.ShouldBe(HttpStatusCode.InternalServerError);
        host.Logs.Entries.Single(e => e.EventId == 500).Exception!.Message.ShouldBe("callback");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Headers_are_read_only_once_the_response_started()
    {
        Exception? thrown = null;
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", async (HttpContext context) =>
        {
            await context.Response.WriteAsync("x");
            thrown = Record.Exception(() => context.Response.Headers["X-Late"] = "late");
        }));

        (await host.Http.GetStringAsync("")).ShouldBe("x");
        thrown.ShouldBeOfType<InvalidOperationException>();
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task HEAD_gets_the_headers_of_GET_without_a_body_and_204_and_304_carry_no_body()
    {
        await using AspNetTestApp host = await StartAsync(app =>
        {
            app.MapMethods("/page", ["GET", "HEAD"], () => "twelve bytes");
            app.MapGet("/empty", () => Results.NoContent());
            app.MapGet("/cached", (HttpResponse response) =>
            {
                response.StatusCode = 304;
                response.Headers.ETag = "\"v1\"";
            });
        });

        using RawClient client = host.Connect();
        await client.SendAsync("HEAD /page HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse head = await client.ReadResponseAsync(headRequest: true);
        head.StatusCode.ShouldBe(200);
        head.Body.ShouldBeEmpty();

        await client.SendAsync("GET /empty HTTP/1.1\r\nHost: test\r\n\r\nGET /cached HTTP/1.1\r\nHost: test\r\n\r\nGET /page HTTP/1.1\r\nHost: test\r\n\r\n");
        RawResponse noContent = await client.ReadResponseAsync();
        noContent.StatusCode.ShouldBe(204);
        noContent.Header("Content-Length").ShouldBeNull();
        noContent.Header("Transfer-Encoding").ShouldBeNull();
        RawResponse notModified = await client.ReadResponseAsync();
        notModified.StatusCode.ShouldBe(304);
        notModified.Header("ETag").ShouldBe("\"v1\"");
        notModified.Body.ShouldBeEmpty();

        // The pipelined GET after them proves neither left a body on the wire.
        (await client.ReadResponseAsync()).BodyText.ShouldBe("twelve bytes");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Stopping_the_host_lets_a_request_in_flight_finish_then_closes()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var release = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        AspNetTestApp host = await StartAsync(app => app.MapGet("/slow", async () =>
        {
            entered.TrySetResult();
            await release.Task;
            return "finished";
        }));
        try
        {
            using RawClient client = host.Connect();
            await client.SendAsync("GET /slow HTTP/1.1\r\nHost: test\r\n\r\n");
            await entered.Task.WaitAsync(TestTimeouts.Operation);

            host.App.Services.GetRequiredService<IHostApplicationLifetime>().StopApplication();
            Task stopped = host.App.WaitForShutdownAsync();

            // The listeners close as the stop begins (on libuv one per loop, each closed on its loop thread).
            await WaitUntilAsync(() => Record.Exception(() => RawClient.Connect(host.EndPoint).Dispose()) is SocketException);
            stopped.IsCompleted.ShouldBeFalse();

            release.TrySetResult();
            RawResponse response = await client.ReadResponseAsync();
            response.BodyText.ShouldBe("finished");
            response.Header("Connection").ShouldBe("close");
            (await client.IsClosedByServerAsync()).ShouldBeTrue();
            await stopped.WaitAsync(TestTimeouts.Operation);
        }
        finally
        {
            release.TrySetResult();
            await host.DisposeAsync();
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_host_shutdown_timeout_aborts_a_request_that_outlives_it()
    {
        var entered = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var aborted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using AspNetTestApp host = await StartAsync(
            app => app.MapGet("/never", async (CancellationToken requestAborted) =>
            {
                entered.TrySetResult();
                try
                {
                    await Task.Delay(Timeout.Infinite, requestAborted);
                }
                catch (OperationCanceledException)
                {
                    aborted.TrySetResult();
                }
            }),
            builder => builder.Services.Configure<HostOptions>(options => options.ShutdownTimeout = TimeSpan.FromMilliseconds(300)));

        using RawClient client = host.Connect();
        await client.SendAsync("GET /never HTTP/1.1\r\nHost: test\r\n\r\n");
        await entered.Task.WaitAsync(TestTimeouts.Operation);
        await host.App.StopAsync().WaitAsync(TestTimeouts.Operation);
        await aborted.Task.WaitAsync(TestTimeouts.Operation);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task The_framework_context_and_features_are_reused_for_the_requests_of_a_connection()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapGet("/", (HttpContext context) =>
            $"{System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(context)}/{System.Runtime.CompilerServices.RuntimeHelpers.GetHashCode(context.Features)}/{context.Items.Count}"));

        using RawClient first = host.Connect();
        using RawClient second = host.Connect();
        string[] seen = new string[3];
        await first.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\nGET / HTTP/1.1\r\nHost: test\r\n\r\n");
        seen[0] = (await first.ReadResponseAsync()).BodyText;
        seen[1] = (await first.ReadResponseAsync()).BodyText;
        await second.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        seen[2] = (await second.ReadResponseAsync()).BodyText;

        seen[1].ShouldBe(seen[0]);
        seen[2].ShouldNotBe(seen[0]);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_lower_body_limit_set_by_the_application_answers_413()
    {
        await using AspNetTestApp host = await StartAsync(app => app.MapPost("/small", async (HttpContext context) =>
        {
            context.Features.Get<Microsoft.AspNetCore.Http.Features.IHttpMaxRequestBodySizeFeature>()!.MaxRequestBodySize = 10;
            using var reader = new StreamReader(context.Request.Body);
            return await reader.ReadToEndAsync();
        }));

        (await (await host.Http.PostAsync("small", new StringContent("short"))).Content.ReadAsStringAsync()).ShouldBe("short");
        using HttpResponseMessage tooLarge = await host.Http.PostAsync("small", new StringContent(new string('x', 100)));
        tooLarge.StatusCode.ShouldBe(HttpStatusCode.RequestEntityTooLarge);
        using HttpResponseMessage chunkedTooLarge = await host.Http.PostAsync("small", new StreamContent(new MemoryStream(new byte[100])));
        chunkedTooLarge.StatusCode.ShouldBe(HttpStatusCode.RequestEntityTooLarge);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_file_result_is_sent_whole_through_SendFileAsync()
    {
        string path = Path.GetTempFileName();
        byte[] content = Pattern(200_000);
        await File.WriteAllBytesAsync(path, content);
        try
        {
            await using AspNetTestApp host = await StartAsync(app => app.MapGet("/file", () => Results.File(path, "application/octet-stream")));
            byte[] body = await host.Http.GetByteArrayAsync("file");
            body.ShouldBe(content);
        }
        finally
        {
            File.Delete(path);
        }
    }

    private static byte[] Pattern(int length)
    {
        byte[] data = new byte[length];
        for (int i = 0; i < length; i++)
        {
            data[i] = (byte)(i * 31 + (i >> 8));
        }

        return data;
    }

    private static async Task WaitUntilAsync(Func<bool> condition)
    {
        for (int i = 0; i < 400 && !condition(); i++)
        {
            await Task.Delay(50);
        }

        condition().ShouldBeTrue();
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class AspNetCoreServerTestsOnLibuv : AspNetCoreServerTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class AspNetCoreServerTestsOnIoUring : AspNetCoreServerTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
