using System;
using System.Buffers;
using System.Linq;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Http.Tests.Infrastructure;
using Falconet.Server;
using Falconet.Transport;
using Falconet.Transport.Tls;
using Shouldly;

namespace Falconet.Http.Tests.Tls;

/// <summary>
/// The TLS decorator as a transport, without a server: over any transport (here one that wraps every connection, as a
/// test or a PROXY protocol decorator would), its listener hands out only connections whose handshake completed, and an
/// unbinding listener loses none it held.
/// </summary>
public class TlsListenerTests
{
    private const int HandshakeCompletedEvent = 401;

    protected virtual TransportKind Transport => TransportKind.Sockets;

    private static async Task<RawClient> ConnectTlsAsync(EndPoint endPoint) =>
        await Task.Run(() => RawClient.ConnectTls((IPEndPoint)endPoint)).WaitAsync(TestTimeouts.Operation);

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Its_listener_hands_out_connections_with_the_handshake_complete_and_the_negotiated_protocol_on_the_contract()
    {
        await using Decorated tls = await Decorated.BindAsync(Transport);
        ValueTask<TransportConnection?> accept = tls.Listener.AcceptAsync();
        using RawClient client = await ConnectTlsAsync(tls.Listener.EndPoint);

        TransportConnection connection = (await accept.AsTask().WaitAsync(TestTimeouts.Operation))!;
        await using (connection)
        {
            connection.ShouldNotBeOfType<CountingConnection>();
            connection.TlsInfo.ShouldNotBeNull().ApplicationProtocol.ShouldBe(SslApplicationProtocol.Http11);
            connection.NegotiatedApplicationProtocol.ShouldBe(SslApplicationProtocol.Http11);
            connection.RemoteEndPoint.ShouldBe(client.Socket.LocalEndPoint);

            // Plaintext both ways through the contract, over the wrapped connection.
            await client.SendAsync("ping"u8.ToArray());
            MemoryBlock block = connection.Pool.Rent();
            try
            {
                (await connection.ReceiveAsync(block.Memory).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(4);
                block.Memory.Span[..4].ToArray().ShouldBe("ping"u8.ToArray());
            }
            finally
            {
                connection.Pool.Return(block);
            }

            await connection.SendAsync(new ReadOnlySequence<byte>("pong"u8.ToArray())).AsTask().WaitAsync(TestTimeouts.Operation);
            (await client.ReadExactAsync(4)).ShouldBe("pong"u8.ToArray());
        }

        tls.Counting.Connections.Count.ShouldBe(1);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Records_kept_for_the_send_that_follows_leave_with_it_or_before_close_notify_when_none_follows()
    {
        await using Decorated tls = await Decorated.BindAsync(Transport);
        ValueTask<TransportConnection?> accept = tls.Listener.AcceptAsync();
        using RawClient client = await ConnectTlsAsync(tls.Listener.EndPoint);
        TransportConnection connection = (await accept.AsTask().WaitAsync(TestTimeouts.Operation))!;
        CountingConnection inner = tls.Counting.Connections.ShouldHaveSingleItem();

        // A response head kept, then its body: one send beneath TLS carries both.
        int sends = inner.Sends;
        await connection.SendBeforeMoreAsync(new ReadOnlySequence<byte>("head-"u8.ToArray()), default).AsTask().WaitAsync(TestTimeouts.Operation);
        inner.Sends.ShouldBe(sends, "the head's records wait for the body's send");
        await connection.SendAsync(new ReadOnlySequence<byte>("body"u8.ToArray())).AsTask().WaitAsync(TestTimeouts.Operation);
        inner.Sends.ShouldBe(sends + 1);
        (await client.ReadExactAsync(9)).ShouldBe("head-body"u8.ToArray());

        // Kept with no send after it (the body's write failed first): a graceful close still delivers it, then close_notify.
        await connection.SendBeforeMoreAsync(new ReadOnlySequence<byte>("kept"u8.ToArray()), default).AsTask().WaitAsync(TestTimeouts.Operation);
        await connection.DisposeAsync().AsTask().WaitAsync(TestTimeouts.Operation);
        (await client.ReadExactAsync(4)).ShouldBe("kept"u8.ToArray());
        (await client.ReceiveEndAsync().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task A_failed_handshake_is_closed_and_never_handed_out_and_the_next_good_one_is()
    {
        var logs = new RecordingLoggerFactory();
        await using Decorated tls = await Decorated.BindAsync(Transport, logs);
        ValueTask<TransportConnection?> accept = tls.Listener.AcceptAsync();
        using RawClient plain = RawClient.Connect((IPEndPoint)tls.Listener.EndPoint);
        await plain.SendAsync("GET / HTTP/1.1\r\nHost: test\r\n\r\n");
        (await plain.ReceiveEndAsync().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "not_tls");
        accept.IsCompleted.ShouldBeFalse();

        using RawClient client = await ConnectTlsAsync(tls.Listener.EndPoint);
        await using TransportConnection connection = (await accept.AsTask().WaitAsync(TestTimeouts.Operation))!;

        connection.RemoteEndPoint.ShouldBe(client.Socket.LocalEndPoint);
    }

    [Fact(Timeout = TestTimeouts.TestMilliseconds)]
    public async Task Unbinding_closes_a_completed_handshake_nobody_accepted_and_AcceptAsync_then_returns_null()
    {
        var logs = new RecordingLoggerFactory();
        await using Decorated tls = await Decorated.BindAsync(Transport, logs);
        using var first = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        using var second = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await first.ConnectAsync(tls.Listener.EndPoint);
        await second.ConnectAsync(tls.Listener.EndPoint);

        // One accept call takes both from the inner listener and runs both handshakes; it returns the first to complete.
        ValueTask<TransportConnection?> accept = tls.Listener.AcceptAsync();
        using var firstTls = new SslStream(new NetworkStream(first));
        using var secondTls = new SslStream(new NetworkStream(second));
        await Task.WhenAll(
            firstTls.AuthenticateAsClientAsync(TestCertificates.ClientOptions()),
            secondTls.AuthenticateAsClientAsync(TestCertificates.ClientOptions())).WaitAsync(TestTimeouts.Operation);
        await using TransportConnection accepted = (await accept.AsTask().WaitAsync(TestTimeouts.Operation))!;
        for (int i = 0; i < 500 && logs.Entries.Count(entry => entry.EventId == HandshakeCompletedEvent) < 2; i++)
        {
            await Task.Delay(10);
        }

        logs.Entries.Count(entry => entry.EventId == HandshakeCompletedEvent).ShouldBe(2);
        await tls.Listener.UnbindAsync().AsTask().WaitAsync(TestTimeouts.Operation);

        // The one nobody accepted was closed (close_notify, then the end of the stream), counted as server_stopping.
        SslStream notAccepted = accepted.RemoteEndPoint!.Equals(first.LocalEndPoint) ? secondTls : firstTls;
        (await notAccepted.ReadAsync(new byte[16]).AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBe(0);
        await TlsProbe.WaitForFailedHandshakeAsync(logs, "server_stopping");
        (await tls.Listener.AcceptAsync().AsTask().WaitAsync(TestTimeouts.Operation)).ShouldBeNull();
    }

    /// <summary>A TLS decorator over a counting transport (a wrapper of every accepted connection), bound on loopback.</summary>
    private sealed class Decorated : IAsyncDisposable
    {
        private Decorated(CountingTransportFactory counting, IConnectionListener listener)
        {
            Counting = counting;
            Listener = listener;
        }

        public CountingTransportFactory Counting { get; }

        public IConnectionListener Listener { get; }

        public static async Task<Decorated> BindAsync(TransportKind kind, RecordingLoggerFactory? logs = null)
        {
            CountingTransportFactory counting = CountingTransportFactory.Over(kind);
            var context = new ListenerContext(TimeProvider.System, TimeSpan.FromSeconds(1),
                (logs ?? new RecordingLoggerFactory()).CreateLogger("tls"), Admission: null);
            var factory = new TlsTransportFactory(counting, new TlsServerOptions { ServerCertificate = TestCertificates.Server, Engine = TlsEngine.SslStream }, context);
            factory.Pools.ShouldBe(counting.Pools);
            IConnectionListener listener = await factory.BindAsync(new IPEndPoint(IPAddress.Loopback, 0));
            return new Decorated(counting, listener);
        }

        public async ValueTask DisposeAsync()
        {
            await Listener.DisposeAsync();
            foreach (SlabMemoryPool pool in Counting.Pools)
            {
                await pool.WaitForAllReturnedAsync(TestTimeouts.Operation);
            }

            await Counting.DisposeAsync();
        }
    }
}

/// <summary>The same tests on the libuv transport.</summary>
public sealed class TlsListenerTestsOnLibuv : TlsListenerTests
{
    protected override TransportKind Transport => TransportKind.Libuv;
}

/// <summary>The same tests on the io_uring transport.</summary>
public sealed class TlsListenerTestsOnIoUring : TlsListenerTests
{
    protected override TransportKind Transport => TransportKind.IoUring;
}
