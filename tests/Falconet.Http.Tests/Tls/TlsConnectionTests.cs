using System;
using System.Buffers;
using System.Collections.Generic;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.IoUring;
using Falconet.Transport.Libuv;
using Falconet.Transport.Sockets;
using Falconet.Transport.Tls;
using Falconet.Transport.Tls.OpenSsl;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// The TLS decorator against the transport contract, below the HTTP layer: one gathered inner send per batch, receives
/// woken by StopReceiving, close_notify before the FIN, and a disposal that waits for a pending receive.
/// </summary>
public class TlsConnectionTests
{
    private static readonly TlsServerSettings s_settings = new(new TlsServerOptions { ServerCertificate = TestCertificates.Server, Engine = TlsEngine.SslStream }, TimeProvider.System);

    private static readonly ServerOptionsSelectionCallback s_select = static (_, _, _, _) => ValueTask.FromResult(s_settings.For(null)!);

    private static readonly TlsServerSettings s_openSslSettings =
        new(new TlsServerOptions { ServerCertificate = TestCertificates.Server, Engine = TlsEngine.OpenSsl }, TimeProvider.System);

    /// <summary>The engine of the connections under test.</summary>
    protected virtual TlsEngine Engine => TlsEngine.SslStream;

    private Task<Pair> ConnectAsync(SslProtocols protocols = SslProtocols.None, int maxBytesInFlight = TlsServerOptions.DefaultMaxBytesInFlight,
        int clientReceiveBuffer = 0) =>
        Pair.ConnectAsync(CreateTransport(), Engine == TlsEngine.OpenSsl ? s_openSslSettings.OpenSsl : null, protocols, maxBytesInFlight, clientReceiveBuffer);

    protected virtual ITransportFactory CreateTransport() =>
        new SocketTransportFactory(new SocketTransportOptions { IoThreadCount = 1, TrackLeaks = true });

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_batch_of_many_blocks_leaves_as_records_in_one_inner_send()
    {
        await using Pair pair = await ConnectAsync();
        byte[] payload = BodyHashing.RandomBytes(5 * SlabMemoryPool.BlockSize + 123, seed: 1);
        using var chain = new BlockChain(pair.Server.Pool);
        chain.Write(payload);
        chain.GetSequence().IsSingleSegment.ShouldBeFalse();
        int sendsBefore = pair.Counting.Sends;

        await pair.Server.SendAsync(chain.GetSequence());

        (pair.Counting.Sends - sendsBefore).ShouldBe(1);
        (await pair.ReadClientAsync(payload.Length)).ShouldBe(payload);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_large_batch_leaves_in_sends_within_the_inner_connections_gather_limit_and_the_bound()
    {
        await using Pair pair = await ConnectAsync();
        byte[] payload = BodyHashing.RandomBytes(600 * 1024, seed: 2);
        using var chain = new BlockChain(pair.Server.Pool);
        chain.Write(payload);
        int sendsBefore = pair.Counting.Sends;

        Task<byte[]> read = pair.ReadClientAsync(payload.Length);
        await pair.Server.SendAsync(chain.GetSequence());

        (await read).ShouldBe(payload);
        (pair.Counting.Sends - sendsBefore).ShouldBeGreaterThan(1);
        pair.Counting.MostSegments.ShouldBeLessThanOrEqualTo(pair.Counting.MaxGatheredSegments);
        pair.Counting.LargestSend.ShouldBeLessThanOrEqualTo(TlsServerOptions.DefaultMaxBytesInFlight);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_reader_that_stops_reading_holds_at_most_the_bound_of_records_and_then_gets_every_byte()
    {
        const int Bound = TlsServerOptions.MinMaxBytesInFlight;
        await using Pair pair = await ConnectAsync(maxBytesInFlight: Bound, clientReceiveBuffer: 16 * 1024);
        byte[] payload = BodyHashing.RandomBytes(4 * 1024 * 1024, seed: 3);
        using var chain = new BlockChain(pair.Server.Pool);
        chain.Write(payload);

        // The client reads nothing yet: the send stalls once the socket buffers are full, with at most the bound queued.
        ValueTask send = pair.Server.SendAsync(chain.GetSequence());
        await WaitUntilStalledAsync(pair);
        send.IsCompleted.ShouldBeFalse();
        pair.Server.RecordStream.PeakQueued.ShouldBeGreaterThan(TlsConnection.RecordPayload);
        pair.Server.RecordStream.PeakQueued.ShouldBeLessThanOrEqualTo(Bound);

        byte[] read = await pair.ReadClientAsync(payload.Length);
        await send.AsTask().WaitAsync(TestTimeouts.Operation);
        BodyHashing.Sha256Hex(read).ShouldBe(BodyHashing.Sha256Hex(payload));
        pair.Server.RecordStream.PeakQueued.ShouldBeLessThanOrEqualTo(Bound);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Aborting_a_connection_in_the_middle_of_a_large_send_fails_the_send_and_returns_every_block()
    {
        await using Pair pair = await ConnectAsync(clientReceiveBuffer: 16 * 1024);
        byte[] payload = BodyHashing.RandomBytes(4 * 1024 * 1024, seed: 4);
        using var chain = new BlockChain(pair.Server.Pool);
        chain.Write(payload);
        ValueTask send = pair.Server.SendAsync(chain.GetSequence());
        await WaitUntilStalledAsync(pair);
        send.IsCompleted.ShouldBeFalse();

        pair.Server.Abort();

        Exception failure = await Should.ThrowAsync<Exception>(send.AsTask().WaitAsync(TestTimeouts.Operation));
        failure.ShouldBeAssignableTo<System.IO.IOException>();
        await pair.DisposeServerAsync();

        // Only the caller's own blocks are left: no record block outlives the connection.
        chain.Dispose();
        foreach (SlabMemoryPool pool in pair.Pools)
        {
            await pool.WaitForAllReturnedAsync(TimeSpan.FromSeconds(5));
        }
    }

    /// <summary>Waits until the server's records stop moving (the socket buffers are full), at most a few seconds.</summary>
    private static async Task WaitUntilStalledAsync(Pair pair)
    {
        long sent = -1;
        for (int i = 0; i < 100; i++)
        {
            await Task.Delay(50);
            long now = pair.Counting.Sends;
            if (now == sent && now > 0)
            {
                return;
            }

            sent = now;
        }

        throw new TimeoutException("The server's send never stalled.");
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task StopReceiving_wakes_a_pending_receive_with_0_and_sending_still_works()
    {
        await using Pair pair = await ConnectAsync();
        MemoryBlock block = pair.Server.Pool.Rent();
        try
        {
            ValueTask<int> pending = pair.Server.ReceiveAsync(block.Memory);
            await Task.Delay(50);
            pending.IsCompleted.ShouldBeFalse();

            await Task.Run(pair.Server.StopReceiving);
            (await pending.AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
            (await pair.Server.ReceiveAsync(block.Memory)).ShouldBe(0);

            await pair.Server.SendAsync(new ReadOnlySequence<byte>("after"u8.ToArray()));
            (await pair.ReadClientAsync(5)).ShouldBe("after"u8.ToArray());
        }
        finally
        {
            block.Pool.Return(block);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_second_concurrent_receive_is_refused_as_the_contract_says()
    {
        await using Pair pair = await ConnectAsync();
        MemoryBlock block = pair.Server.Pool.Rent();
        try
        {
            ValueTask<int> pending = pair.Server.ReceiveAsync(block.Memory);
            await Task.Delay(50);
            pending.IsCompleted.ShouldBeFalse();

            Should.Throw<InvalidOperationException>(() => pair.Server.ReceiveAsync(new byte[16]));

            await Task.Run(pair.Server.StopReceiving);
            (await pending.AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
        }
        finally
        {
            block.Pool.Return(block);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task ShutdownSend_sends_close_notify_then_the_FIN_and_receiving_goes_on()
    {
        await using Pair pair = await ConnectAsync();
        pair.Server.ShutdownSend();

        // close_notify ends the TLS stream; the socket's own end (FIN) follows it.
        (await pair.Client.ReadAsync(new byte[16]).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
        (await pair.ClientSocket.ReceiveAsync(new byte[16], SocketFlags.None).WaitAsync(TestTimeouts.Operation)).ShouldBe(0);

        await pair.Client.WriteAsync("still"u8.ToArray());
        MemoryBlock block = pair.Server.Pool.Rent();
        try
        {
            (await pair.Server.ReceiveAsync(block.Memory).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(5);
            block.Memory.Span[..5].ToArray().ShouldBe("still"u8.ToArray());
        }
        finally
        {
            block.Pool.Return(block);
        }
    }

    [Theory(Timeout = TestTimeouts.TestMilliseconds)]
    [InlineData(SslProtocols.Tls12)]
    [InlineData(SslProtocols.Tls13)]
    public async Task Data_and_close_notify_arriving_together_read_as_the_data_then_0_while_the_socket_stays_open(SslProtocols protocol)
    {
        // A receive after a short one waits for the peer's bytes before it reads through SslStream; a record SslStream
        // holds unprocessed (a TLS 1.2 alert after the data it returned) must be read without waiting for more.
        await using Pair pair = await ConnectAsync(protocol);
        MemoryBlock block = pair.Server.Pool.Rent();
        try
        {
            await pair.Client.WriteAsync("one"u8.ToArray());
            (await pair.Server.ReceiveAsync(block.Memory).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(3);

            await pair.Client.WriteAsync("two"u8.ToArray());
            await pair.Client.ShutdownAsync();
            await Task.Delay(100);
            (await pair.Server.ReceiveAsync(block.Memory).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(3);
            block.Memory.Span[..3].ToArray().ShouldBe("two"u8.ToArray());
            (await pair.Server.ReceiveAsync(block.Memory).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
        }
        finally
        {
            block.Pool.Return(block);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_receive_after_a_short_one_waits_for_the_peer_before_it_reads_through_the_engine()
    {
        await using Pair pair = await ConnectAsync();
        MemoryBlock block = pair.Server.Pool.Rent();
        try
        {
            await pair.Client.WriteAsync("first"u8.ToArray());
            (await pair.Server.ReceiveAsync(block.Memory).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(5);

            // Nothing is left in the engine, so the next receive waits for the peer's bytes in a pool block of its own
            // (SslStream's read would wait inside, its async methods suspended; OpenSSL's would return "want read").
            ValueTask<int> pending = pair.Server.ReceiveAsync(block.Memory);
            pending.IsCompleted.ShouldBeFalse();
            pair.Server.ReceiveWaitsForRecords.ShouldBeTrue();

            await pair.Client.WriteAsync("second"u8.ToArray());
            (await pending.AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(6);
            block.Memory.Span[..6].ToArray().ShouldBe("second"u8.ToArray());
            pair.Server.ReceiveWaitsForRecords.ShouldBeFalse();
        }
        finally
        {
            block.Pool.Return(block);
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Receives_after_short_ones_return_every_record_in_order()
    {
        // Records of every size, some split across inner receives, some several in one: the waits before reading lose nothing.
        await using Pair pair = await ConnectAsync();
        byte[] payload = BodyHashing.RandomBytes(300 * 1024, seed: 3);
        Task write = WriteInPiecesAsync();
        byte[] received = new byte[payload.Length];
        int total = 0;
        MemoryBlock block = pair.Server.Pool.Rent();
        try
        {
            while (total < payload.Length)
            {
                int count = await pair.Server.ReceiveAsync(block.Memory).AsTask().WaitAsync(TestTimeouts.Operation);
                count.ShouldBeGreaterThan(0);
                block.Memory.Span[..count].CopyTo(received.AsSpan(total));
                total += count;
            }
        }
        finally
        {
            block.Pool.Return(block);
        }

        await write;
        received.ShouldBe(payload);

        async Task WriteInPiecesAsync()
        {
            int offset = 0;
            for (int piece = 1; offset < payload.Length; piece = (piece * 7 % 40_000) + 1)
            {
                int length = Math.Min(piece, payload.Length - offset);
                await pair.Client.WriteAsync(payload.AsMemory(offset, length));
                offset += length;
                if (piece % 3 == 0)
                {
                    await Task.Delay(1);
                }
            }
        }
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task DisposeAsync_completes_only_after_a_pending_receive_and_its_continuation()
    {
        Pair pair = await ConnectAsync();
        MemoryBlock block = pair.Server.Pool.Rent();
        bool continued = false;
        Task abandoned = ReceiveThenMarkAsync();
        await Task.Delay(50);
        abandoned.IsCompleted.ShouldBeFalse();

        await pair.Server.DisposeAsync().AsTask().WaitAsync(TestTimeouts.Operation);

        continued.ShouldBeTrue();
        block.Pool.Return(block);
        await pair.DisposeAsync();

        async Task ReceiveThenMarkAsync()
        {
            await pair.Server.ReceiveAsync(block.Memory);
            continued = true;
        }
    }

    /// <summary>A client over TLS and the server side of its connection, wrapped in the decorator.</summary>
    private sealed class Pair : IAsyncDisposable
    {
        private readonly ITransportFactory _transport;
        private readonly IConnectionListener _listener;
        private bool _serverDisposed;

        private Pair(ITransportFactory transport, IConnectionListener listener, Socket clientSocket, SslStream client, CountingConnection counting, TlsConnection server)
        {
            _transport = transport;
            _listener = listener;
            ClientSocket = clientSocket;
            Client = client;
            Counting = counting;
            Server = server;
        }

        public Socket ClientSocket { get; }

        public SslStream Client { get; }

        public CountingConnection Counting { get; }

        public TlsConnection Server { get; }

        public static async Task<Pair> ConnectAsync(ITransportFactory transport, OpenSslServerContext? openSsl, SslProtocols protocols,
            int maxBytesInFlight, int clientReceiveBuffer)
        {
            IConnectionListener listener = await transport.BindAsync(new IPEndPoint(IPAddress.Loopback, 0));
            var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            if (clientReceiveBuffer != 0)
            {
                socket.ReceiveBufferSize = clientReceiveBuffer;
            }

            ValueTask<TransportConnection?> accept = listener.AcceptAsync();
            await socket.ConnectAsync(listener.EndPoint);
            var counting = new CountingConnection((await accept.AsTask().WaitAsync(TestTimeouts.Operation))!);
            var server = new TlsConnection(counting, maxBytesInFlight, openSsl);

            var client = new SslStream(new NetworkStream(socket, ownsSocket: false));
            SslClientAuthenticationOptions options = TestCertificates.ClientOptions();
            options.EnabledSslProtocols = protocols;
            await Task.WhenAll(
                server.AuthenticateAsServerAsync(s_select, null),
                client.AuthenticateAsClientAsync(options)).WaitAsync(TestTimeouts.Operation);
            return new Pair(transport, listener, socket, client, counting, server);
        }

        public async Task<byte[]> ReadClientAsync(int count)
        {
            byte[] buffer = new byte[count];
            await Client.ReadExactlyAsync(buffer).AsTask().WaitAsync(TestTimeouts.Operation);
            return buffer;
        }

        public IEnumerable<SlabMemoryPool> Pools => _transport.Pools;

        public async ValueTask DisposeServerAsync()
        {
            _serverDisposed = true;
            await Server.DisposeAsync();
        }

        public async ValueTask DisposeAsync()
        {
            if (!_serverDisposed)
            {
                _serverDisposed = true;
                await Server.DisposeAsync();
            }

            await Client.DisposeAsync();
            ClientSocket.Dispose();
            await _listener.DisposeAsync();
            foreach (SlabMemoryPool pool in _transport.Pools)
            {
                await pool.WaitForAllReturnedAsync(TimeSpan.FromSeconds(5));
            }

            await ((IAsyncDisposable)_transport).DisposeAsync();
        }
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class TlsConnectionTestsOnLibuv : TlsConnectionTests
{
    protected override ITransportFactory CreateTransport() =>
        new LibuvTransportFactory(new LibuvTransportOptions { LoopCount = 1, TrackLeaks = true });
}

/// <summary>The same tests on libuv with thread-pool scheduling.</summary>
public sealed class TlsConnectionTestsOnLibuvThreadPool : TlsConnectionTests
{
    protected override ITransportFactory CreateTransport() =>
        new LibuvTransportFactory(new LibuvTransportOptions { LoopCount = 1, TrackLeaks = true, Scheduling = IoScheduling.ThreadPool });
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class TlsConnectionTestsOnIoUring : TlsConnectionTests
{
    protected override ITransportFactory CreateTransport() =>
        new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = 1, TrackLeaks = true });
}

/// <summary>The same tests on io_uring with thread-pool scheduling.</summary>
public sealed class TlsConnectionTestsOnIoUringThreadPool : TlsConnectionTests
{
    protected override ITransportFactory CreateTransport() =>
        new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = 1, TrackLeaks = true, Scheduling = IoScheduling.ThreadPool });
}

/// <summary>The same tests on the OpenSSL engine, on the sockets transport.</summary>
public sealed class TlsConnectionTestsOnOpenSsl : TlsConnectionTests
{
    protected override TlsEngine Engine => TlsEngine.OpenSsl;
}

/// <summary>The same tests on the OpenSSL engine, on the libuv transport.</summary>
public sealed class TlsConnectionTestsOnOpenSslOnLibuv : TlsConnectionTests
{
    protected override TlsEngine Engine => TlsEngine.OpenSsl;

    protected override ITransportFactory CreateTransport() =>
        new LibuvTransportFactory(new LibuvTransportOptions { LoopCount = 1, TrackLeaks = true });
}

/// <summary>The same tests on the OpenSSL engine, on libuv with thread-pool scheduling.</summary>
public sealed class TlsConnectionTestsOnOpenSslOnLibuvThreadPool : TlsConnectionTests
{
    protected override TlsEngine Engine => TlsEngine.OpenSsl;

    protected override ITransportFactory CreateTransport() =>
        new LibuvTransportFactory(new LibuvTransportOptions { LoopCount = 1, TrackLeaks = true, Scheduling = IoScheduling.ThreadPool });
}

/// <summary>The same tests on the OpenSSL engine, on the io_uring transport.</summary>
public sealed class TlsConnectionTestsOnOpenSslOnIoUring : TlsConnectionTests
{
    protected override TlsEngine Engine => TlsEngine.OpenSsl;

    protected override ITransportFactory CreateTransport() =>
        new IoUringTransportFactory(new IoUringTransportOptions { LoopCount = 1, TrackLeaks = true });
}
