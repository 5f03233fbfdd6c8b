using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net;
using System.Net.Sockets;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Shouldly;

namespace Falconet.Runtime.Tests.Transport;

/// <summary>The loop transport tests on io_uring, and what only io_uring promises: its rings, staged sends, submission polling, why it cannot run.</summary>
public sealed class IoUringTransportTests : LoopTransportTests
{
    private protected override TransportUnderTest Transport => TransportUnderTest.IoUring;

    private protected override ITransportFactory CreateFactory(int loops) => new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = loops, TrackLeaks = true });

    /// <summary>Set on the listening socket, inherited by the accepted one.</summary>
    private protected override bool IsNoDelay(TransportConnection connection) => ((IoUringConnection)connection).IsNoDelay;

    private protected override (int LoopsRunning, int OpenConnections) LoopState(ITransportFactory factory)
        => (((IoUringTransportFactory)factory).LoopsRunning, ((IoUringTransportFactory)factory).OpenConnections);

    [Fact(Timeout = Timeout)]
    public async Task Each_loop_has_a_single_issuer_ring_with_deferred_task_running()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 2);

        ((IoUringTransportFactory)harness.Factory).Loops.ShouldAllBe(loop => (loop.RingFlags & IoUringSupport.RequiredFlags) == IoUringSupport.RequiredFlags);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_send_of_one_block_made_on_the_loop_completes_at_once_and_its_bytes_arrive()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        byte[] payload = new byte[4096];
        new Random(3).NextBytes(payload);
        var completedAtOnce = new TaskCompletionSource<bool>(TaskCreationOptions.RunContinuationsAsynchronously);

        // On the loop, as the HTTP layer sends: the bytes are copied and the send is done before the kernel saw them.
        server.Schedule(new DelegateWorkItem(() =>
        {
            ValueTask send = server.SendAsync(new ReadOnlySequence<byte>(payload));
            completedAtOnce.SetResult(send.IsCompletedSuccessfully);
        }));

        (await completedAtOnce.Task.WaitAsync(Step)).ShouldBeTrue();
        byte[] received = new byte[payload.Length];
        await TransportHarness.ReceiveExactlyAsync(client, received).WaitAsync(Step);
        received.ShouldBe(payload);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_larger_send_made_on_the_loop_that_the_socket_takes_whole_completes_at_once_and_frees_its_blocks()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        const int Blocks = 16;
        byte[] payload = new byte[Blocks * SlabMemoryPool.BlockSize - 100];
        new Random(4).NextBytes(payload);
        var result = new TaskCompletionSource<(bool AtOnce, long Outstanding)>(TaskCreationOptions.RunContinuationsAsynchronously);

        // On the loop, as the HTTP layer sends, from pool blocks: the socket's buffer has room for all of it, so the
        // send is made at once (sendmsg) rather than with the turn's batch, and its blocks can go back while hot.
        server.Schedule(new DelegateWorkItem(() =>
        {
            var chain = new BlockChain(server.Pool);
            chain.Write(payload);
            ValueTask send = server.SendAsync(chain.GetSequence());
            if (send.IsCompletedSuccessfully)
            {
                chain.Dispose();
                result.SetResult((true, server.Pool.BlocksOutstanding));
            }
            else
            {
                // Its blocks stay the send's until it completes.
                result.SetResult((false, server.Pool.BlocksOutstanding));
                _ = send.AsTask().ContinueWith(_ => chain.Dispose(), TaskScheduler.Default);
            }
        }));

        (bool atOnce, long outstanding) = await result.Task.WaitAsync(Step);
        atOnce.ShouldBeTrue("a send the socket takes whole completes in the call");
        outstanding.ShouldBeLessThan(Blocks, "the sent blocks went back to the pool in the same turn");
        byte[] received = new byte[payload.Length];
        await TransportHarness.ReceiveExactlyAsync(client, received).WaitAsync(Step);
        received.ShouldBe(payload);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_graceful_close_completes_at_once_and_delivers_every_completed_send_to_a_slow_reader_before_the_FIN()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        long completed = 0;
        Task waiting = await FillUntilASendWaitsAsync(server, sent => completed = sent);
        ValueTask dispose = server.DisposeAsync();
        await Should.ThrowAsync<ConnectionAbortedException>(() => waiting.WaitAsync(Step));
        await dispose.AsTask().WaitAsync(Step);

        // Everything that completed reaches the peer, then the end of the stream.
        long received = 0;
        byte[] buffer = new byte[64 * 1024];
        int n;
        while ((n = await client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step)) > 0)
        {
            received += n;
        }

        received.ShouldBe(completed);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_graceful_close_resets_a_peer_that_takes_nothing_of_the_last_staged_send_for_a_whole_interval()
    {
        var factory = new IoUringTransportFactory(new IoUringTransportOptions
        {
            LoopCount = 1,
            TrackLeaks = true,
            LingeringSendCheckInterval = TimeSpan.FromMilliseconds(300),
        });
        await using TransportHarness harness = await TransportHarness.StartAsync(factory);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        client.ReceiveBufferSize = 4096;
        Task waiting = await FillUntilASendWaitsAsync(server);

        // The caller's close is done at once; the staged bytes wait for a peer that never reads, then the connection is reset.
        await server.DisposeAsync().AsTask().WaitAsync(Step);
        await Should.ThrowAsync<ConnectionAbortedException>(() => waiting.WaitAsync(Step));
        var connection = (IoUringConnection)server;
        for (int i = 0; i < 100 && factory.Loops[0].OpenConnections > 0; i++)
        {
            await Task.Delay(50);
        }

        factory.Loops[0].OpenConnections.ShouldBe(0);
        byte[] buffer = new byte[64 * 1024];
        var reset = await Should.ThrowAsync<SocketException>(async () =>
        {
            while (await client.ReceiveAsync(buffer, SocketFlags.None).WaitAsync(Step) > 0)
            {
            }
        });
        reset.SocketErrorCode.ShouldBe(SocketError.ConnectionReset);
        connection.IsNoDelay.ShouldBeFalse("the descriptor is closed");
    }

    [Fact(Timeout = Timeout)]
    public async Task With_submission_polling_connections_echo_and_the_ring_has_a_polling_thread()
    {
        var factory = new IoUringTransportFactory(new IoUringTransportOptions
        {
            LoopCount = 1,
            TrackLeaks = true,
            SubmissionPolling = true,
            SubmissionPollingIdle = TimeSpan.FromMilliseconds(10),
        });
        await using TransportHarness harness = await TransportHarness.StartAsync(factory);
        (factory.Loops[0].RingFlags & IoUringNative.SetupSqPoll).ShouldBe(IoUringNative.SetupSqPoll);

        // Pauses longer than the polling thread's idle time: it sleeps in between and must be woken.
        await EchoWithPausesAsync(harness, TimeSpan.FromMilliseconds(50));
    }

    /// <summary>Five round trips of one connection, each followed by <paramref name="pause"/>, then the client's close and the echo's end.</summary>
    private static async Task EchoWithPausesAsync(TransportHarness harness, TimeSpan pause)
    {
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        Task echo = TransportHarness.EchoAsync(server);
        for (int i = 0; i < 5; i++)
        {
            byte[] payload = BitConverter.GetBytes(i);
            await TransportHarness.SendAllAsync(client, payload);
            byte[] echoed = new byte[payload.Length];
            await TransportHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
            echoed.ShouldBe(payload);
            await Task.Delay(pause);
        }

        client.Shutdown(SocketShutdown.Send);
        await echo.WaitAsync(Step);
    }

    [Fact(Timeout = Timeout)]
    public async Task A_connection_that_stops_reading_holds_a_bounded_number_of_blocks_and_later_reads_every_byte_in_order()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        await ReadOneByteThenStopReadingAsync(client, server);

        long sent = 1 + await SendUntilStalledAsync(client, offset: 1);

        // What the server holds is bounded; the rest waits in the kernel's socket buffers, and TCP stops the client.
        server.Pool.BlocksOutstanding.ShouldBeLessThanOrEqualTo(HeldBlockBound);
        sent.ShouldBeGreaterThan(HeldBlockBound * SlabMemoryPool.BlockSize, "the client must have sent more than the server may hold");
        byte[] buffer = new byte[16 * 1024];
        for (long offset = 1; offset < sent;)
        {
            int received = await server.ReceiveAsync(buffer).AsTask().WaitAsync(Step);
            received.ShouldBeGreaterThan(0);
            for (int i = 0; i < received; i++)
            {
                if (buffer[i] != Pattern(offset + i))
                {
                    throw new ShouldAssertException($"Byte {offset + i} is {buffer[i]}, expected {Pattern(offset + i)}.");
                }
            }

            offset += received;
        }
    }

    [Fact(Timeout = Timeout)]
    public async Task Closing_a_connection_that_holds_received_bytes_returns_every_block_to_the_pool()
    {
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 1);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        await ReadOneByteThenStopReadingAsync(client, server);
        await SendUntilStalledAsync(client, offset: 1);
        server.Pool.BlocksOutstanding.ShouldBeGreaterThan(0, "the connection holds what arrived");

        await server.DisposeAsync().AsTask().WaitAsync(Step);

        await server.Pool.WaitForAllReturnedAsync(Step);
        server.Pool.BlocksOutstanding.ShouldBe(0);
    }

    [Fact(Timeout = Timeout)]
    public async Task Connections_that_do_not_read_leave_the_loops_receive_buffers_to_the_others()
    {
        // More connections than the ring has buffers for if each kept even a few: the ring's buffers must come back at once.
        const int NotReading = 80;
        await using TransportHarness harness = await TransportHarness.StartAsync(TransportUnderTest.IoUring, ioThreads: 1);
        for (int i = 0; i < NotReading; i++)
        {
            (Socket idleClient, TransportConnection idleServer) = await harness.ConnectAsync();
            await ReadOneByteThenStopReadingAsync(idleClient, idleServer);
            await SendUntilStalledAsync(idleClient, offset: 1, stall: TimeSpan.FromMilliseconds(50));
        }

        harness.Factory.Pools[0].BlocksOutstanding.ShouldBeLessThanOrEqualTo(NotReading * HeldBlockBound);
        (Socket client, TransportConnection server) = await harness.ConnectAsync();
        Task echo = TransportHarness.EchoAsync(server);
        byte[] payload = new byte[64 * 1024];
        new Random(7).NextBytes(payload);
        byte[] echoed = new byte[payload.Length];
        Task send = TransportHarness.SendAllAsync(client, payload);
        await TransportHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
        await send.WaitAsync(Step);
        echoed.ShouldBe(payload);
        client.Shutdown(SocketShutdown.Send);
        await echo.WaitAsync(Step);
    }

    /// <summary>The blocks one connection that does not read may hold: its hold limit, and what one loop turn brought on top.</summary>
    private static long HeldBlockBound
        => (IoUringConnection.MaxHeldBytes + (IoUringReceiveBuffers.Count * IoUringReceiveBuffers.BufferSize)) / SlabMemoryPool.BlockSize;

    private static byte Pattern(long offset) => (byte)((offset * 7) + (offset >> 12));

    /// <summary>The server receives once (which arms its receive) and then stops asking.</summary>
    private static async Task ReadOneByteThenStopReadingAsync(Socket client, TransportConnection server)
    {
        ValueTask<int> first = server.ReceiveAsync(new byte[1]);
        await TransportHarness.SendAllAsync(client, new[] { Pattern(0) });
        (await first.AsTask().WaitAsync(Step)).ShouldBe(1);
    }

    /// <summary>Sends the pattern from <paramref name="offset"/> without blocking until the socket takes nothing for <paramref name="stall"/>; the bytes sent.</summary>
    private static async Task<long> SendUntilStalledAsync(Socket client, long offset, TimeSpan? stall = null)
    {
        TimeSpan quiet = stall ?? TimeSpan.FromMilliseconds(300);
        client.Blocking = false;
        byte[] chunk = new byte[64 * 1024];
        long sent = 0;
        var deadline = DateTime.UtcNow + Step;
        var lastProgress = DateTime.UtcNow;
        while (DateTime.UtcNow - lastProgress < quiet)
        {
            DateTime.UtcNow.ShouldBeLessThan(deadline, "the client never stalled");
            for (int i = 0; i < chunk.Length; i++)
            {
                chunk[i] = Pattern(offset + sent + i);
            }

            int n = client.Send(chunk, 0, chunk.Length, SocketFlags.None, out SocketError error);
            if (error == SocketError.Success && n > 0)
            {
                sent += n;
                lastProgress = DateTime.UtcNow;
                continue;
            }

            error.ShouldBe(SocketError.WouldBlock);
            await Task.Delay(10);
        }

        client.Blocking = true;
        return sent;
    }

    /// <summary>
    /// Sends blocks of 4 KiB from outside the loop until one has to wait: the ones before completed at once (staged), the
    /// last of them is still in the kernel, and the one returned waits behind it.
    /// </summary>
    private static async Task<Task> FillUntilASendWaitsAsync(TransportConnection server, Action<long>? completed = null)
    {
        long sent = 0;
        for (int i = 0; i < 10_000; i++)
        {
            byte[] block = new byte[4096];
            block.AsSpan().Fill((byte)i);
            Task send = server.SendAsync(new ReadOnlySequence<byte>(block)).AsTask();
            if (await Task.WhenAny(send, Task.Delay(200)) != send)
            {
                completed?.Invoke(sent);
                return send;
            }

            sent += block.Length;
        }

        throw new InvalidOperationException("The peer never stopped taking bytes.");
    }

    [Theory]
    [InlineData(IoUringNative.ENOSYS, "seccomp")]
    [InlineData(IoUringNative.EPERM, "EPERM")]
    [InlineData(IoUringNative.EINVAL, "Linux 6.1 or later")]
    [InlineData(IoUringNative.ENOMEM, "ulimit -l")]
    public void Each_way_io_uring_setup_fails_has_a_reason_that_says_what_to_change(int errno, string expected)
    {
        IoUringSupport.SetupFailureReason(errno, "5.10.0").ShouldContain(expected);
    }

    [Fact]
    public void The_options_refuse_what_cannot_be_honoured()
    {
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = 0 }));
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { Backlog = 0 }));
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { Scheduling = (IoScheduling)7 }));
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { SubmissionPollingIdle = TimeSpan.FromSeconds(-1) }));
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { BatchedTurnWait = TimeSpan.FromMicroseconds(-1) }))
            .Message.ShouldContain("BatchedTurnWait");
        Should.Throw<ArgumentOutOfRangeException>(() => new IoUringTransportFactory(new IoUringTransportOptions { BatchedTurnWait = TimeSpan.FromMilliseconds(11) }))
            .Message.ShouldContain("BatchedTurnWait");
        Should.Throw<ArgumentException>(() => new IoUringTransportFactory(new IoUringTransportOptions { BatchedTurnWait = TimeSpan.FromMicroseconds(100), SubmissionPolling = true }))
            .Message.ShouldContain("BatchedTurnWait");
    }

    [Fact(Timeout = Timeout)]
    public async Task With_batched_turns_a_loop_that_is_mostly_idle_never_waits_for_a_batch()
    {
        var factory = new IoUringTransportFactory(new IoUringTransportOptions
        {
            LoopCount = 1,
            TrackLeaks = true,
            BatchedTurnWait = TimeSpan.FromMilliseconds(5),
        });
        await using TransportHarness harness = await TransportHarness.StartAsync(factory);

        // Two connections whose round trips are spaced out: turns of more than one completion, on a loop idle most of the time.
        var pairs = new List<(Socket Client, Task Echo)>();
        for (int c = 0; c < 2; c++)
        {
            (Socket client, TransportConnection server) = await harness.ConnectAsync();
            pairs.Add((client, TransportHarness.EchoAsync(server)));
        }

        // The first round trips run code compiled on the loop thread as they go, which keeps it busy: counted from after them.
        long batchedAfterWarmUp = 0;
        for (int i = 0; i < 60; i++)
        {
            if (i == 20)
            {
                batchedAfterWarmUp = factory.Loops[0].BatchedWaits;
            }

            foreach ((Socket client, _) in pairs)
            {
                await TransportHarness.SendAllAsync(client, BitConverter.GetBytes(i));
            }

            foreach ((Socket client, _) in pairs)
            {
                byte[] echoed = new byte[sizeof(int)];
                await TransportHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
                BitConverter.ToInt32(echoed).ShouldBe(i);
            }

            await Task.Delay(5);
        }

        foreach ((Socket client, Task echo) in pairs)
        {
            client.Shutdown(SocketShutdown.Send);
            await echo.WaitAsync(Step);
        }

        (factory.Loops[0].BatchedWaits - batchedAfterWarmUp).ShouldBe(0, "a loop busy less than 60 % of the time waits as without batched turns");
    }

    [Fact(Timeout = Timeout)]
    public async Task With_batched_turns_busy_turns_wait_for_a_batch_and_every_connection_still_echoes_in_order()
    {
        var factory = new IoUringTransportFactory(new IoUringTransportOptions
        {
            LoopCount = 1,
            TrackLeaks = true,
            BatchedTurnWait = TimeSpan.FromMicroseconds(200),

            // However busy the test machine lets the loop be: the batched waits themselves are what is tested here.
            BatchedTurnBusyShare = 0,
        });
        await using TransportHarness harness = await TransportHarness.StartAsync(factory);

        // Many connections in lock-step round trips: turns that reap several completions, so the batched wait runs.
        const int Connections = 16;
        const int RoundTrips = 100;
        var clients = new List<Task>();
        var echoes = new List<Task>();
        for (int c = 0; c < Connections; c++)
        {
            (Socket client, TransportConnection server) = await harness.ConnectAsync();
            echoes.Add(TransportHarness.EchoAsync(server));
            int connection = c;
            clients.Add(Task.Run(async () =>
            {
                using (client)
                {
                    for (int i = 0; i < RoundTrips; i++)
                    {
                        byte[] payload = BitConverter.GetBytes((connection * RoundTrips) + i);
                        await TransportHarness.SendAllAsync(client, payload);
                        byte[] echoed = new byte[payload.Length];
                        await TransportHarness.ReceiveExactlyAsync(client, echoed).WaitAsync(Step);
                        echoed.ShouldBe(payload);
                    }

                    client.Shutdown(SocketShutdown.Send);
                }
            }));
        }

        await Task.WhenAll(clients).WaitAsync(Step * 4);
        await Task.WhenAll(echoes).WaitAsync(Step);
        factory.Loops[0].BatchedWaits.ShouldBeGreaterThan(0, "busy turns must have waited for a batch");

        // A lone connection after the burst: a turn of one completion waits as usual, so each pause ends with its answer.
        await EchoWithPausesAsync(harness, TimeSpan.FromMilliseconds(20));
    }
}
