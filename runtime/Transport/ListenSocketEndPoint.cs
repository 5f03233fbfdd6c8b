using System;
using System.Net;
using System.Net.Sockets;

namespace Falconet.Transport;

/// <summary>
/// A socket that is already listening, given by its file descriptor (systemd socket activation, a supervisor that keeps the
/// socket across restarts): every transport adopts it instead of binding. The process must not use the descriptor otherwise.
/// </summary>
/// <remarks>
/// Closing the adopted socket at stop closes this process's descriptor only: the socket keeps listening for whoever else holds
/// it (systemd, the next process), and connections waiting in its queue stay there. See docs/deployment.md.
/// </remarks>
public sealed class ListenSocketEndPoint : EndPoint
{
    /// <summary>Adopts the listening socket <paramref name="handle"/>; <paramref name="name"/> is its name (LISTEN_FDNAMES), for logs.</summary>
    public ListenSocketEndPoint(nint handle, string? name = null)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(handle);
        Handle = handle;
        Name = name;
    }

    /// <summary>The file descriptor of the listening socket.</summary>
    public nint Handle { get; }

    /// <summary>Its name (systemd's FileDescriptorName=, LISTEN_FDNAMES), or null.</summary>
    public string? Name { get; }

    /// <inheritdoc/>
    public override AddressFamily AddressFamily => AddressFamily.Unspecified;

    /// <inheritdoc/>
    public override string ToString() => Name is null ? $"fd {Handle}" : $"fd {Handle} ({Name})";
}
