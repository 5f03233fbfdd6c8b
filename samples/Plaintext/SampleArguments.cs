using System;
using System.Diagnostics.CodeAnalysis;
using System.Globalization;
using Falconet.Server;
using Falconet.Transport;

namespace Falconet.Samples.Plaintext;

/// <summary>The sample's command line: --port N (default 8080), --transport sockets|libuv, --scheduling threadpool|iothreads, --max-connections N, --stats; an option left out takes the server's default.</summary>
internal sealed class SampleArguments
{
    public int Port { get; private set; } = 8080;

    public TransportKind? Transport { get; private set; }

    public IoScheduling? Scheduling { get; private set; }

    public bool Stats { get; private set; }

    public int? MaxConnections { get; private set; }

    public static bool TryParse(string[] args, [NotNullWhen(true)] out SampleArguments? parsed, [NotNullWhen(false)] out string? error)
    {
        var result = new SampleArguments();
        parsed = null;
        for (int i = 0; i < args.Length; i++)
        {
            switch (args[i])
            {
                case "--port":
                    if (i + 1 >= args.Length || !int.TryParse(args[++i], NumberStyles.None, CultureInfo.InvariantCulture, out int port) || port > 65535)
                    {
                        error = "--port needs a number between 0 and 65535.";
                        return false;
                    }

                    result.Port = port;
                    break;
                case "--transport":
                    string? transport = i + 1 < args.Length ? args[++i] : null;
                    if (string.Equals(transport, "sockets", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Transport = TransportKind.Sockets;
                    }
                    else if (string.Equals(transport, "libuv", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Transport = TransportKind.Libuv;
                    }
                    else
                    {
                        error = "--transport is 'sockets' or 'libuv'.";
                        return false;
                    }

                    break;
                case "--scheduling":
                    string? scheduling = i + 1 < args.Length ? args[++i] : null;
                    if (string.Equals(scheduling, "threadpool", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Scheduling = IoScheduling.ThreadPool;
                    }
                    else if (string.Equals(scheduling, "iothreads", StringComparison.OrdinalIgnoreCase))
                    {
                        result.Scheduling = IoScheduling.IoThreads;
                    }
                    else
                    {
                        error = "--scheduling is 'threadpool' or 'iothreads' (default: the transport's own).";
                        return false;
                    }

                    break;
                case "--stats":
                    result.Stats = true;
                    break;
                case "--max-connections":
                    if (i + 1 >= args.Length || !int.TryParse(args[++i], NumberStyles.None, CultureInfo.InvariantCulture, out int max) || max < 1)
                    {
                        error = "--max-connections needs a positive number.";
                        return false;
                    }

                    result.MaxConnections = max;
                    break;
                case "-h" or "--help":
                    error = "Falconet TechEmpower sample.";
                    return false;
                default:
                    error = $"Unknown option '{args[i]}'.";
                    return false;
            }
        }

        parsed = result;
        error = null;
        return true;
    }
}
