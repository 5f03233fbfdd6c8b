using System;
using System.Globalization;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Soak;

/// <summary>
/// A raw client connection, over TCP or over TLS (an <see cref="SslStream"/>): exact bytes out, responses read one by one,
/// every wait bounded.
/// </summary>
internal sealed class Connection : IDisposable
{
    private readonly Socket _socket;
    private readonly Stream _stream;
    private readonly byte[] _buffer = new byte[64 * 1024];
    private int _start;
    private int _end;

    private Connection(Socket socket, Stream stream)
    {
        _socket = socket;
        _stream = stream;
    }

    /// <summary>The TCP socket under the connection: what the TLS scenarios write raw records to.</summary>
    public Socket Socket => _socket;

    /// <summary>
    /// Connects, then, with <paramref name="tls"/>, runs the TLS handshake as a client that accepts any certificate (the
    /// soak's is self-signed) and offers only http/1.1 with ALPN.
    /// </summary>
    public static async Task<Connection> OpenAsync(IPEndPoint endpoint, bool tls, CancellationToken cancellation, int? receiveBuffer = null)
    {
        Socket socket = await ConnectAsync(endpoint, cancellation, receiveBuffer);
        if (!tls)
        {
            return new Connection(socket, new NetworkStream(socket, ownsSocket: false));
        }

        var stream = new SslStream(new NetworkStream(socket, ownsSocket: false));
        try
        {
            await stream.AuthenticateAsClientAsync(ClientOptions, cancellation);
            return new Connection(socket, stream);
        }
        catch
        {
            await stream.DisposeAsync();
            socket.Dispose();
            throw;
        }
    }

    private static readonly SslClientAuthenticationOptions ClientOptions = new()
    {
        TargetHost = "localhost",
        ApplicationProtocols = [SslApplicationProtocol.Http11],
        RemoteCertificateValidationCallback = static (_, _, _, _) => true,
    };

    private static async Task<Socket> ConnectAsync(IPEndPoint endpoint, CancellationToken cancellation, int? receiveBuffer)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        if (receiveBuffer is int size)
        {
            socket.ReceiveBufferSize = size;
        }

        try
        {
            await socket.ConnectAsync(endpoint, cancellation);
            return socket;
        }
        catch
        {
            socket.Dispose();
            throw;
        }
    }

    public async Task SendAsync(ReadOnlyMemory<byte> bytes, CancellationToken cancellation)
    {
        await _stream.WriteAsync(bytes, cancellation);
    }

    public Task SendAsync(string text, CancellationToken cancellation) => SendAsync(Encoding.ASCII.GetBytes(text), cancellation);

    /// <summary>Reads one response: its status and body length (Content-Length framing only: the sample never chunks), or null at end of stream.</summary>
    public async Task<(int Status, int BodyLength, bool Close)?> ReadResponseAsync(CancellationToken cancellation)
    {
        string? statusLine = await ReadLineAsync(cancellation);
        if (statusLine is null)
        {
            return null;
        }

        int status = int.Parse(statusLine.AsSpan(9, 3), CultureInfo.InvariantCulture);
        int length = 0;
        bool close = false;
        while (await ReadLineAsync(cancellation) is { Length: > 0 } line)
        {
            if (line.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase))
            {
                length = int.Parse(line.AsSpan(15).Trim(), CultureInfo.InvariantCulture);
            }
            else if (line.Equals("Connection: close", StringComparison.OrdinalIgnoreCase))
            {
                close = true;
            }
        }

        for (int left = length; left > 0;)
        {
            if (_start == _end && !await FillAsync(cancellation))
            {
                throw new InvalidOperationException("The connection closed inside a body.");
            }

            int take = Math.Min(left, _end - _start);
            _start += take;
            left -= take;
        }

        return (status, length, close);
    }

    /// <summary>
    /// True once the server closed the connection (FIN or reset; over TLS, also a failed record). When
    /// <paramref name="cancellation"/> fires first this throws, so that the scenario loop tells the end of the run (not counted)
    /// from a server that never closed (counted as no answer within the wait).
    /// </summary>
    public async Task<bool> ClosedByServerAsync(CancellationToken cancellation)
    {
        try
        {
            while (await FillAsync(cancellation))
            {
            }

            return true;
        }
        catch (Exception exception) when (exception is SocketException or IOException)
        {
            return true;
        }
    }

    /// <summary>Closes with a reset (SO_LINGER 0), as a client that crashes or gives up does.</summary>
    public void Reset()
    {
        try
        {
            _socket.LingerState = new LingerOption(true, 0);
        }
        catch (SocketException)
        {
        }

        _socket.Dispose();
        _stream.Dispose();
    }

    /// <summary>Sends TLS's close_notify (no-op without TLS); the socket stays open.</summary>
    public Task CloseNotifyAsync() => _stream is SslStream tls ? tls.ShutdownAsync() : Task.CompletedTask;

    public void Dispose()
    {
        _stream.Dispose();
        _socket.Dispose();
    }

    private async Task<string?> ReadLineAsync(CancellationToken cancellation)
    {
        var line = new StringBuilder();
        while (true)
        {
            if (_start == _end && !await FillAsync(cancellation))
            {
                return line.Length == 0 ? null : throw new InvalidOperationException("The connection closed inside a line.");
            }

            byte b = _buffer[_start++];
            if (b == '\n')
            {
                return line.ToString().TrimEnd('\r');
            }

            line.Append((char)b);
        }
    }

    private async Task<bool> FillAsync(CancellationToken cancellation)
    {
        _start = 0;
        _end = await _stream.ReadAsync(_buffer, cancellation);
        return _end > 0;
    }
}
