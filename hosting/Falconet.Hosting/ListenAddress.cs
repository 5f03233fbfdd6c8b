using System;
using System.Collections.Generic;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Falconet.Server;

namespace Falconet.Hosting;

/// <summary>
/// An address to listen on, as written in a URL (<c>--urls</c>, <c>ASPNETCORE_URLS</c>, configuration): its scheme and the
/// endpoints it stands for (IP endpoints, or a Unix domain socket). One parser for the generic host and ASP.NET Core, so both
/// read an address the same way.
/// </summary>
/// <remarks>
/// <c>localhost</c> is the IPv4 and the IPv6 loopback (IPv4 alone for port 0, which cannot name the same free port on both);
/// <c>*</c>, <c>+</c>, an empty host and <c>0.0.0.0</c> are every address (IPv6 any in dual mode where the system has IPv6);
/// an IP address is itself. A missing port is the scheme's (80, 443). A bare <c>address:port</c> is http.
/// <c>unix:</c> and an absolute path, as Kestrel writes it (<c>http://unix:/run/app.sock</c>), is a Unix domain socket.
/// </remarks>
internal sealed class ListenAddress
{
    private ListenAddress(string text, bool isHttps, IReadOnlyList<EndPoint> endPoints)
    {
        Text = text;
        IsHttps = isHttps;
        EndPoints = endPoints;
    }

    /// <summary>The address as written.</summary>
    public string Text { get; }

    /// <summary>True for https:// addresses.</summary>
    public bool IsHttps { get; }

    /// <summary>The endpoints to bind, one or two (localhost): <see cref="IPEndPoint"/>s or a <see cref="UnixDomainSocketEndPoint"/>.</summary>
    public IReadOnlyList<EndPoint> EndPoints { get; }

    /// <summary>Parses <paramref name="text"/>.</summary>
    /// <exception cref="FormatException">
    /// Not an address Falconet can bind: another scheme, a named pipe, a relative socket path, a host name, a path base, or a
    /// bad port; the message says which.
    /// </exception>
    public static ListenAddress Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        string value = text.Trim();
        bool https = false;
        bool hasScheme = true;
        if (value.StartsWith("http://", StringComparison.OrdinalIgnoreCase))
        {
            value = value["http://".Length..];
        }
        else if (value.StartsWith("https://", StringComparison.OrdinalIgnoreCase))
        {
            value = value["https://".Length..];
            https = true;
        }
        else if (value.Contains("://", StringComparison.Ordinal))
        {
            throw new FormatException($"'{text}': Falconet serves http:// and https:// addresses only.");
        }
        else
        {
            hasScheme = false;
        }

        if (value.StartsWith("unix:", StringComparison.OrdinalIgnoreCase))
        {
            return new ListenAddress(text, https, [UnixSocketOf(value["unix:".Length..], text)]);
        }

        if (value.StartsWith("pipe:", StringComparison.OrdinalIgnoreCase))
        {
            throw new FormatException($"'{text}': named pipes are a Windows transport; Falconet listens on TCP and Unix domain sockets.");
        }

        int slash = value.IndexOf('/', StringComparison.Ordinal);
        if (slash >= 0)
        {
            if (value.AsSpan(slash).TrimEnd('/').Length != 0)
            {
                throw new FormatException($"'{text}': a path base in an address is not supported; use UsePathBase in the application.");
            }

            value = value[..slash];
        }

        // The host ends at the port's colon: after a bracketed IPv6 literal, or at the only colon.
        string host;
        string? portText;
        if (value.StartsWith('['))
        {
            int close = value.IndexOf(']', StringComparison.Ordinal);
            if (close < 0)
            {
                throw new FormatException($"'{text}': the IPv6 address has no closing ']'.");
            }

            host = value[1..close];
            portText = close + 1 < value.Length && value[close + 1] == ':' ? value[(close + 2)..] : null;
            if (portText is null && close + 1 != value.Length)
            {
                throw new FormatException($"'{text}' is not an address: write a host and a port, such as \"http://127.0.0.1:8080\".");
            }
        }
        else
        {
            int colon = value.LastIndexOf(':');
            if (colon >= 0 && value.IndexOf(':', StringComparison.Ordinal) != colon)
            {
                throw new FormatException($"'{text}': write an IPv6 address in brackets, such as \"http://[::1]:8080\".");
            }

            host = colon >= 0 ? value[..colon] : value;
            portText = colon >= 0 ? value[(colon + 1)..] : null;
        }

        int port;
        if (portText is null)
        {
            if (!hasScheme)
            {
                throw new FormatException($"'{text}' is not an endpoint: write an IP address and a port, such as \"http://127.0.0.1:8080\" or \"[::]:8080\".");
            }

            port = https ? 443 : 80;
        }
        else if (!int.TryParse(portText, NumberStyles.None, CultureInfo.InvariantCulture, out port) || port > IPEndPoint.MaxPort)
        {
            throw new FormatException($"'{text}': '{portText}' is not a port (0 to 65535).");
        }

        return new ListenAddress(text, https, EndPointsOf(host, port, text));
    }

    /// <summary>An endpoint as a URL: "http://127.0.0.1:8080", "https://[::1]:8443", "http://unix:/run/app.sock".</summary>
    public static string Format(EndPoint endPoint, bool https) => FalconetServer.FormatUrl(endPoint, https);

    /// <summary>
    /// The socket of "unix:/path": the path runs to the next ':' (after it Kestrel reads a path base, which Falconet does not
    /// support), and is absolute, so that it does not depend on the directory the process started in.
    /// </summary>
    private static UnixDomainSocketEndPoint UnixSocketOf(string value, string text)
    {
        int colon = value.IndexOf(':', StringComparison.Ordinal);
        string path = colon < 0 ? value : value[..colon];
        if (path.Length > 1)
        {
            // "http://unix:/run/app.sock/", as a TCP address may end in '/': a socket's path never does.
            path = path.TrimEnd('/');
        }
        if (colon >= 0 && value.AsSpan(colon + 1).TrimEnd('/').Length != 0)
        {
            throw new FormatException($"'{text}': a path base in an address is not supported; use UsePathBase in the application.");
        }

        if (!path.StartsWith('/'))
        {
            throw new FormatException($"'{text}': write the Unix socket's absolute path, such as \"http://unix:/run/app/app.sock\".");
        }

        try
        {
            return new UnixDomainSocketEndPoint(path);
        }
        catch (ArgumentException exception)
        {
            throw new FormatException($"'{text}': {exception.Message}", exception);
        }
    }

    private static EndPoint[] EndPointsOf(string host, int port, string text)
    {
        if (string.Equals(host, "localhost", StringComparison.OrdinalIgnoreCase))
        {
            return Socket.OSSupportsIPv6 && port != 0
                ? [new IPEndPoint(IPAddress.Loopback, port), new IPEndPoint(IPAddress.IPv6Loopback, port)]
                : [new IPEndPoint(IPAddress.Loopback, port)];
        }

        if (host is "*" or "+" or "" || (IPAddress.TryParse(host, out IPAddress? any) && any.Equals(IPAddress.Any)))
        {
            return [new IPEndPoint(Socket.OSSupportsIPv6 ? IPAddress.IPv6Any : IPAddress.Any, port)];
        }

        if (IPAddress.TryParse(host, out IPAddress? address))
        {
            return [new IPEndPoint(address, port)];
        }

        throw new FormatException($"'{text}' names a host ({host}): Falconet binds IP addresses, 'localhost' or a wildcard ('*').");
    }
}
