"""The site as built: named racks and devices placed on the floor (``inventory``), every link
port to port with its routed length and cable medium (``cabling``), and the summary of cables by
medium the design reports (``summary``). Pure functions of a ClusterDesign and the catalog;
``clustertwin export`` writes them to files. (Moved down from ``clustertwin.export`` so the
design stage and the bill of materials use the same per-link media as ``cabling.csv``.)"""
