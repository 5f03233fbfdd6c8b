using System;
using System.IO;
using System.Net.Sockets;
using System.Runtime.InteropServices;

namespace Falconet.Server;

/// <summary>
/// The file of a Unix domain socket endpoint: a stale one left by a process that ended without removing it is removed before
/// binding, a path that is not a socket fails the start, and so does one another process listens on, unless the server takes
/// it over (<see cref="FalconetServerOptions.ReusePort"/>): it then binds a new socket beside it and renames it over the path,
/// atomically, so that new connections reach the new process while the old one drains. At stop the file is removed only while
/// it is still the one this server bound (a newer process may have taken the path over).
/// </summary>
internal sealed unsafe partial class UnixSocketFile
{
    private const int AtCurrentDirectory = -100;
    private const int AtSymlinkNoFollow = 0x100;
    private const uint StatxType = 0x1;
    private const uint StatxIno = 0x100;
    private const int TypeMask = 0xF000;
    private const int TypeSocket = 0xC000;

    private readonly string _path;
    private readonly string? _takeOverFrom;
    private ulong _inode;

    private UnixSocketFile(UnixDomainSocketEndPoint endpoint, string path, string? bindPath)
    {
        EndPoint = endpoint;
        _path = path;
        _takeOverFrom = bindPath;
        BindTo = bindPath is null ? endpoint : new UnixDomainSocketEndPoint(bindPath);
    }

    /// <summary>The endpoint as configured.</summary>
    public UnixDomainSocketEndPoint EndPoint { get; }

    /// <summary>What to bind: the path itself, or a new path beside it that is renamed over it once listening (a take-over).</summary>
    public UnixDomainSocketEndPoint BindTo { get; }

    /// <summary>
    /// Makes the path ready to bind: removes a socket file nobody listens on; with <paramref name="takeOver"/> a socket someone
    /// listens on is replaced once this server listens. Null for an abstract socket (no file).
    /// </summary>
    /// <exception cref="InvalidOperationException">The path is not a socket, or a process listens on it and <paramref name="takeOver"/> is false; the message names the path.</exception>
    public static UnixSocketFile? Prepare(UnixDomainSocketEndPoint endpoint, bool takeOver)
    {
        string path = endpoint.ToString();
        if (path.Length == 0 || path[0] is '\0' or '@')
        {
            return null;
        }

        if (Stat(path, out int mode, out _))
        {
            if ((mode & TypeMask) != TypeSocket)
            {
                throw new InvalidOperationException($"The Unix socket path '{path}' exists and is not a socket; Falconet removes only a stale socket file. Remove it or choose another path.");
            }

            if (SomeoneListens(endpoint))
            {
                if (!takeOver)
                {
                    throw new InvalidOperationException(
                        $"Another process listens on the Unix socket '{path}' (set ReusePort to take the path over from it, as in a restart).");
                }

                string beside = $"{path}.{Environment.ProcessId}.new";
                File.Delete(beside);
                return new UnixSocketFile(endpoint, path, beside);
            }

            // Left by a process that ended without removing it (a crash, a kill -9).
            File.Delete(path);
        }

        return new UnixSocketFile(endpoint, path, bindPath: null);
    }

    /// <summary>
    /// After the bind: sets <paramref name="permissions"/> (when given) before any client can reach the socket, moves a
    /// take-over's socket onto the path, and remembers which file this server made.
    /// </summary>
    public void Bound(UnixFileMode? permissions)
    {
        string bound = _takeOverFrom ?? _path;
        if (permissions is { } mode && !OperatingSystem.IsWindows())
        {
            File.SetUnixFileMode(bound, mode);
        }

        if (_takeOverFrom is not null)
        {
            // rename(2) replaces the old socket's file atomically: every connect from now on reaches this server.
            File.Move(_takeOverFrom, _path, overwrite: true);
        }

        Stat(_path, out _, out _inode);
    }

    /// <summary>Removes the file, unless another one replaced it meanwhile.</summary>
    public void Remove()
    {
        try
        {
            if (Stat(_path, out int mode, out ulong inode) && (mode & TypeMask) == TypeSocket && inode == _inode)
            {
                File.Delete(_path);
            }
        }
        catch (IOException)
        {
            // Removed already, or the directory went away: nothing is left to clean.
        }
        catch (UnauthorizedAccessException)
        {
        }
    }

    private static bool SomeoneListens(UnixDomainSocketEndPoint endpoint)
    {
        using var probe = new Socket(AddressFamily.Unix, SocketType.Stream, ProtocolType.Unspecified);
        try
        {
            probe.Connect(endpoint);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>statx(2), whose layout is the same on every architecture: the file's type and mode, and its inode.</summary>
    private static bool Stat(string path, out int mode, out ulong inode)
    {
        byte* buffer = stackalloc byte[256];
        if (StatX(AtCurrentDirectory, path, AtSymlinkNoFollow, StatxType | StatxIno, buffer) != 0)
        {
            mode = 0;
            inode = 0;
            return false;
        }

        mode = *(ushort*)(buffer + 28);
        inode = *(ulong*)(buffer + 32);
        return true;
    }

    [LibraryImport("libc", EntryPoint = "statx", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int StatX(int directory, string path, int flags, uint mask, byte* buffer);
}
