using System;
using System.Collections.Concurrent;
using System.Collections.Generic;
using System.Linq;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;
using Falconet.AspNetCore.Tests.Infrastructure;
using Falconet.Http.Tests.Infrastructure;
using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Shouldly;

namespace Falconet.AspNetCore.Tests.Grpc;

/// <summary>
/// A Grpc.AspNetCore service answering Grpc.Net.Client over HTTP/2, cleartext (prior knowledge) and TLS (ALPN): the four kinds
/// of call, response trailers, a deadline and a cancellation that reach the service. The same tests on Kestrel and Falconet,
/// each configured through its own configuration section with the same keys.
/// </summary>
public abstract class GrpcTests
{
    protected abstract WebServer Server { get; }

    protected virtual bool Secure => false;

    private protected async Task<(AspNetTestApp Host, GrpcChannel Channel, Counter.CounterClient Client)> StartAsync()
    {
        string section = AspNetTestApp.ConfigurationSection(Server);
        AspNetTestApp host = await AspNetTestApp.StartAsync(Server, app => app.MapGrpcService<CounterService>(), builder =>
        {
            AspNetTestApp.UseTestCertificate(builder, Server);
            builder.Services.AddGrpc();
            builder.Services.AddSingleton<CancellationSeen>();
            builder.Services.AddSingleton<CallThreads>();
            builder.Configuration.AddInMemoryCollection(new Dictionary<string, string?>
            {
                [$"{section}:Endpoints:Grpc:Url"] = Secure ? "https://127.0.0.1:0" : "http://127.0.0.1:0",
                [$"{section}:Endpoints:Grpc:Protocols"] = Secure ? "Http1AndHttp2" : "Http2",
            });
        }, args: []);

        var channel = GrpcChannel.ForAddress(host.BaseAddress, new GrpcChannelOptions
        {
            HttpHandler = new SocketsHttpHandler { SslOptions = TestCertificates.ClientOptions() },
        });
        return (host, channel, new Counter.CounterClient(channel));
    }

    private protected static CallOptions Bounded => new(deadline: DateTime.UtcNow + TestTimeouts.Operation);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_unary_call_is_answered_over_HTTP2_with_the_services_trailers()
    {
        (AspNetTestApp host, GrpcChannel channel, Counter.CounterClient client) = await StartAsync();
        await using (host)
        using (channel)
        {
            using AsyncUnaryCall<Total> call = client.AddAsync(new AddRequest { A = 40, B = 2, Name = "answer" }, Bounded);
            Total total = await call;
            total.Value.ShouldBe(42);
            total.Protocol.ShouldBe("HTTP/2");
            call.GetStatus().StatusCode.ShouldBe(StatusCode.OK);
            call.GetTrailers().GetValue("x-name").ShouldBe("answer");
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_server_streaming_call_delivers_every_message_in_order()
    {
        (AspNetTestApp host, GrpcChannel channel, Counter.CounterClient client) = await StartAsync();
        await using (host)
        using (channel)
        {
            using AsyncServerStreamingCall<Number> call = client.Count(new CountRequest { To = 200 }, Bounded);
            var received = new List<long>();
            await foreach (Number number in call.ResponseStream.ReadAllAsync())
            {
                received.Add(number.Value);
            }

            received.ShouldBe(Enumerable.Range(1, 200).Select(i => (long)i));
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_client_streaming_call_reads_every_message_past_the_flow_control_window()
    {
        (AspNetTestApp host, GrpcChannel channel, Counter.CounterClient client) = await StartAsync();
        await using (host)
        using (channel)
        {
            // 100 messages of 2 KiB: more than the 64 KiB an HTTP/2 stream may send before the server opens its window.
            ByteString padding = ByteString.CopyFrom(new byte[2048]);
            using AsyncClientStreamingCall<Number, Total> call = client.Sum(Bounded);
            for (int i = 1; i <= 100; i++)
            {
                await call.RequestStream.WriteAsync(new Number { Value = i, Padding = padding });
            }

            await call.RequestStream.CompleteAsync();
            (await call).Value.ShouldBe(5050);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_bidirectional_call_answers_each_message_before_the_next_is_sent()
    {
        (AspNetTestApp host, GrpcChannel channel, Counter.CounterClient client) = await StartAsync();
        await using (host)
        using (channel)
        {
            using AsyncDuplexStreamingCall<Number, Number> call = client.Echo(Bounded);
            for (int i = 1; i <= 50; i++)
            {
                await call.RequestStream.WriteAsync(new Number { Value = i });
                (await call.ResponseStream.MoveNext(CancellationToken.None)).ShouldBeTrue();
                call.ResponseStream.Current.Value.ShouldBe(2 * i);
            }

            await call.RequestStream.CompleteAsync();
            (await call.ResponseStream.MoveNext(CancellationToken.None)).ShouldBeFalse();
            call.GetStatus().StatusCode.ShouldBe(StatusCode.OK);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_deadline_ends_the_call_with_DeadlineExceeded_and_cancels_the_service()
    {
        (AspNetTestApp host, GrpcChannel channel, Counter.CounterClient client) = await StartAsync();
        await using (host)
        using (channel)
        {
            CancellationSeen seen = host.App.Services.GetRequiredService<CancellationSeen>();
            foreach (int milliseconds in DeadlinesMilliseconds)
            {
                RpcException failure = await Should.ThrowAsync<RpcException>(async () =>
                    await client.WaitAsync(new WaitRequest(), deadline: DateTime.UtcNow.AddMilliseconds(milliseconds)));
                failure.StatusCode.ShouldBe(StatusCode.DeadlineExceeded);
                if (seen.Started.Task.IsCompleted)
                {
                    break;
                }
            }

            seen.Started.Task.IsCompleted.ShouldBeTrue("no call reached the service before its deadline");
            (await seen.Seen.Task.WaitAsync(TestTimeouts.Operation)).ShouldBeTrue();
        }
    }

    /// <summary>
    /// The deadlines the deadline test tries, shortest first. A call whose deadline passes before it reaches the service (the
    /// first call of a process, still compiling on a busy machine, can take a second to get there) ends with DeadlineExceeded
    /// all the same, but no service ran that could see a cancellation: the test then calls again with a longer deadline.
    /// </summary>
    private static readonly int[] DeadlinesMilliseconds = [300, 1_000, 3_000, 9_000];

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_call_the_client_cancels_ends_with_Cancelled_and_cancels_the_service()
    {
        (AspNetTestApp host, GrpcChannel channel, Counter.CounterClient client) = await StartAsync();
        await using (host)
        using (channel)
        {
            using var cancellation = new CancellationTokenSource();
            AsyncUnaryCall<Total> call = client.WaitAsync(new WaitRequest(), cancellationToken: cancellation.Token);
            CancellationSeen seen = host.App.Services.GetRequiredService<CancellationSeen>();
            await seen.Started.Task.WaitAsync(TestTimeouts.Operation);
            cancellation.Cancel();

            RpcException failure = await Should.ThrowAsync<RpcException>(async () => await call);
            failure.StatusCode.ShouldBe(StatusCode.Cancelled);
            (await seen.Seen.Task.WaitAsync(TestTimeouts.Operation)).ShouldBeTrue();
            call.Dispose();
        }
    }
}

/// <summary>What the service's <c>Wait</c> saw: that it started, and that its call's cancellation token fired.</summary>
public sealed class CancellationSeen
{
    public TaskCompletionSource Started { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public TaskCompletionSource<bool> Seen { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);
}

/// <summary>Where the service's <c>Add</c> ran: true for each call that ran on a thread-pool thread.</summary>
public sealed class CallThreads
{
    public ConcurrentQueue<bool> OnThreadPool { get; } = new();
}

/// <summary>The service of conformance.proto.</summary>
public sealed class CounterService(CancellationSeen cancellationSeen, CallThreads callThreads) : Counter.CounterBase
{
    public override Task<Total> Add(AddRequest request, ServerCallContext context)
    {
        callThreads.OnThreadPool.Enqueue(Thread.CurrentThread.IsThreadPoolThread);
        context.ResponseTrailers.Add("x-name", request.Name);
        return Task.FromResult(new Total { Value = request.A + request.B, Protocol = context.GetHttpContext().Request.Protocol });
    }

    public override async Task Count(CountRequest request, IServerStreamWriter<Number> responseStream, ServerCallContext context)
    {
        for (int i = 1; i <= request.To; i++)
        {
            await responseStream.WriteAsync(new Number { Value = i });
        }
    }

    public override async Task<Total> Sum(IAsyncStreamReader<Number> requestStream, ServerCallContext context)
    {
        long sum = 0;
        await foreach (Number number in requestStream.ReadAllAsync())
        {
            sum += number.Value;
        }

        return new Total { Value = sum };
    }

    public override async Task Echo(IAsyncStreamReader<Number> requestStream, IServerStreamWriter<Number> responseStream, ServerCallContext context)
    {
        await foreach (Number number in requestStream.ReadAllAsync())
        {
            await responseStream.WriteAsync(new Number { Value = 2 * number.Value });
        }
    }

    public override async Task<Total> Wait(WaitRequest request, ServerCallContext context)
    {
        cancellationSeen.Started.TrySetResult();
        try
        {
            await Task.Delay(TestTimeouts.Operation, context.CancellationToken);
        }
        catch (OperationCanceledException)
        {
            cancellationSeen.Seen.TrySetResult(true);
            throw;
        }

        cancellationSeen.Seen.TrySetResult(false);
        return new Total();
    }
}

public sealed class GrpcTestsOnKestrel : GrpcTests
{
    protected override WebServer Server => WebServer.Kestrel;
}

public sealed class GrpcTestsOverTlsOnKestrel : GrpcTests
{
    protected override WebServer Server => WebServer.Kestrel;

    protected override bool Secure => true;
}

public sealed class GrpcTestsOnFalconetSockets : GrpcTests
{
    protected override WebServer Server => WebServer.FalconetSockets;
}

public sealed class GrpcTestsOnFalconetLibuv : GrpcTestsOnLoop
{
    protected override WebServer Server => WebServer.FalconetLibuv;
}

public sealed class GrpcTestsOverTlsOnFalconetSockets : GrpcTests
{
    protected override WebServer Server => WebServer.FalconetSockets;

    protected override bool Secure => true;
}

public sealed class GrpcTestsOverTlsOnFalconetLibuv : GrpcTestsOnLoop
{
    protected override WebServer Server => WebServer.FalconetLibuv;

    protected override bool Secure => true;
}

/// <summary>
/// The tests on a server whose handlers run inline on their connection's loop thread (Falconet's libuv default), and there
/// a unary call runs from start to end: its message, read with or just after its HEADERS, is no reason for a hand-off to the
/// thread pool.
/// </summary>
public abstract class GrpcTestsOnLoop : GrpcTests
{
    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Unary_calls_run_their_service_method_on_the_loop_thread_not_the_thread_pool()
    {
        (AspNetTestApp host, GrpcChannel channel, Counter.CounterClient client) = await StartAsync();
        await using (host)
        using (channel)
        {
            for (int i = 0; i < 20; i++)
            {
                Total total = await client.AddAsync(new AddRequest { A = i, B = 1, Name = "loop" }, Bounded);
                total.Value.ShouldBe(i + 1);
            }

            ConcurrentQueue<bool> onThreadPool = host.App.Services.GetRequiredService<CallThreads>().OnThreadPool;
            onThreadPool.Count.ShouldBe(20);
            onThreadPool.ShouldAllBe(onPool => !onPool);
        }
    }
}
