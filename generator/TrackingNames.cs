namespace Falconet.Generator;

/// <summary>Names of the incremental pipeline steps, used by tests to check caching.</summary>
internal static class TrackingNames
{
    /// <summary>Each AdditionalFiles schema parsed into a located model.</summary>
    public const string Schema = nameof(Schema);

    /// <summary>MSBuild options (namespace, visibility, what to generate).</summary>
    public const string Options = nameof(Options);

    /// <summary>Default and user schemas merged and validated.</summary>
    public const string Model = nameof(Model);

    /// <summary>Masks, buckets and bit indexes computed from the model.</summary>
    public const string Plan = nameof(Plan);

    /// <summary>AdditionalFiles that look like header schemas but are not named *.headers.json.</summary>
    public const string MisnamedFiles = nameof(MisnamedFiles);

    /// <summary>Whether the compilation references the Falconet runtime (an app's header set needs it).</summary>
    public const string Runtime = nameof(Runtime);

    /// <summary>Diagnostics of all schemas.</summary>
    public const string Diagnostics = nameof(Diagnostics);
}
